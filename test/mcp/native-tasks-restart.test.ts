// A native MCP task outlives the MCP server process that created it: `serve` (over stdio, as a client
// starts it) is SIGKILLed mid-task, and a successor answers tasks/get and tasks/result for it from the
// task record: the session still working is followed to its result; one that went away meanwhile is
// reported as it ended (interrupted), never as working forever and never with an invented result.
import { expect, test } from "bun:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { connect as connectOpencode } from "../../src/opencode/client"
import { readServerRecord } from "../../src/opencode/server"
import { readJson } from "../../src/util/fs"
import { ROOT } from "../helpers/mcp"
import { LONG_TASK } from "../helpers/long-task"
import { fileWorld } from "./_file-world"
import { makeRepo, structured, text } from "./_setup"

const world = fileWorld({
  restart: {
    turns: [
      {
        steps: [
          { tool: "glob", args: { pattern: "*.md" } },
          { text: "restart report", delayMs: 5000 },
        ],
      },
    ],
  },
  long: LONG_TASK,
})

/** `serve` over stdio with a client that declares tasks. */
async function serve() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [`${ROOT}/src/cli/main.ts`, "serve"],
    env: { ...world.home.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" } as Record<string, string>,
    stderr: "pipe",
  })
  const client = new Client({ name: "orchestrator-tests", version: "1" }, { capabilities: { tasks: {} } })
  await client.connect(transport)
  return { client, pid: transport.pid!, close: () => client.close() }
}

const recordOf = (id: string) => readJson<TaskRecord>(`${world.home.paths.tasksDir}/${id}.json`)

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read()
    if (ok(value)) return value
    await Bun.sleep(100)
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

test("a successor process answers tasks/get and tasks/result for the tasks a killed one created", async () => {
  const [followed, orphaned] = [await makeRepo(world), await makeRepo(world)]
  const first = await serve()
  let second: Awaited<ReturnType<typeof serve>> | undefined
  try {
    const create = (cwd: string, task: string) =>
      first.client.request(
        { method: "tools/call", params: { name: "scout", arguments: { cwd, task }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      )
    const a = (await create(followed, "Look. [script:restart]")).task.taskId
    const b = (await create(orphaned, "Look long. [script:long]")).task.taskId
    await until(
      () => recordOf(a),
      (record) => Boolean(record?.sessionID),
    )
    const sessionB = (await until(
      () => recordOf(b),
      (record) => Boolean(record?.sessionID),
    ))!.sessionID!
    expect((await first.client.experimental.tasks.getTask(a)).status).toBe("working")

    process.kill(first.pid, "SIGKILL")
    await until(
      async () => alive(first.pid),
      (up) => !up,
    )
    // Control: both were still running when their process died, so what follows comes from a successor.
    expect([(await recordOf(a))?.status, (await recordOf(b))?.status]).toEqual(["running", "running"])
    // B's session goes away while no MCP server follows it.
    const server = (await readServerRecord(world.home.paths))!
    await connectOpencode(server, { standIns: world.home.paths.opencodeDirsDir }).session.delete({
      sessionID: sessionB,
      directory: orphaned,
    })

    second = await serve()
    const tasks = second.client.experimental.tasks
    const result = (await tasks.getTaskResult(a, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult
    expect(structured(result)).toMatchObject({ task_id: a, status: "succeeded", report: "restart report" })
    const own = await second.client.callTool({ name: "task_result", arguments: { task_id: a } })
    expect(structured(result)).toEqual(structured(own))
    expect(text(result)).toBe(text(own))
    expect(await tasks.getTask(a)).toMatchObject({ taskId: a, status: "completed", statusMessage: "ended succeeded" })

    const ended = await until(
      () => tasks.getTask(b),
      (task) => task.status !== "working",
    )
    expect(ended.status).toBe("completed")
    expect(ended.statusMessage).toStartWith("ended interrupted")
    expect(ended.statusMessage).toContain(sessionB)
    const interrupted = (await tasks.getTaskResult(b, CallToolResultSchema)) as CallToolResult
    expect(structured(interrupted).status).toBe("interrupted")
    expect(structured(interrupted).report).not.toContain("too late")
  } finally {
    await first.close().catch(() => undefined)
    await second?.close()
  }
}, 180_000)
