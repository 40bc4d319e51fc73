// A task of the tasks extension (`io.modelcontextprotocol/tasks`, protocol 2026-07-28) outlives the MCP
// server process that created it: `serve` (over stdio, as a client starts it, spoken to in raw JSON-RPC
// lines with the 2026-07-28 envelope declaring the extension) is SIGKILLed mid-task, and a successor
// answers tasks/get for it from the task record: the session still working is followed to its result;
// one that went away meanwhile is reported as it ended (interrupted), never as working forever and never
// with an invented result. The extension's own schemas (@modelcontextprotocol/ext-tasks) judge the answers.
import { expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { CreateTaskResultV2Schema, GetTaskResultV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2"
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

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "orchestrator-tests", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
}

type Frame = { id?: number; result?: Record<string, unknown>; error?: { code: number; message: string } }

/** `serve` over stdio, spoken to in lines by a 2026-07-28 client declaring the tasks extension. */
async function serve() {
  const proc = Bun.spawn([process.execPath, `${ROOT}/src/cli/main.ts`, "serve"], {
    env: { ...world.home.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" } as Record<string, string>,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  })
  const waiting = new Map<number, (frame: Frame) => void>()
  void (async () => {
    let buffer = ""
    const decoder = new TextDecoder()
    for await (const chunk of proc.stdout) {
      buffer += decoder.decode(chunk, { stream: true })
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines.filter((line) => line.trim())) {
        const frame = JSON.parse(line) as Frame
        if (typeof frame.id === "number") waiting.get(frame.id)?.(frame)
      }
    }
  })()
  let next = 0
  /** The result of one request; a JSON-RPC error throws its message. */
  const request = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = ++next
      waiting.set(id, (frame) => (frame.error ? reject(new Error(frame.error.message)) : resolve(frame.result!)))
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: ENVELOPE } })}\n`)
      void proc.stdin.flush()
    })
  const discovered = await request("server/discover")
  expect(discovered.supportedVersions).toContain("2026-07-28")
  return {
    pid: proc.pid,
    call: (name: string, args: Record<string, unknown>) => request("tools/call", { name, arguments: args }),
    get: async (taskId: string) => GetTaskResultV2Schema.parse(await request("tasks/get", { taskId })),
    close: async () => {
      proc.stdin.end()
      await proc.exited
    },
  }
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

test("a successor process answers tasks/get for the tasks a killed one created", async () => {
  const [followed, orphaned] = [await makeRepo(world), await makeRepo(world)]
  const first = await serve()
  let second: Awaited<ReturnType<typeof serve>> | undefined
  try {
    // Each call outlasts the one-second sync budget and comes back as the extension's task.
    const create = async (cwd: string, task: string) => {
      const answered = await first.call("scout", { cwd, task })
      expect(answered.resultType).toBe("task")
      return CreateTaskResultV2Schema.parse(answered).taskId
    }
    const a = await create(followed, "Look. [script:restart]")
    const b = await create(orphaned, "Look long. [script:long]")
    await until(
      () => recordOf(a),
      (record) => Boolean(record?.sessionID),
    )
    const sessionB = (await until(
      () => recordOf(b),
      (record) => Boolean(record?.sessionID),
    ))!.sessionID!
    expect((await first.get(a)).status).toBe("working")

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
    const successor = second
    const done = await until(
      () => successor.get(a),
      (task) => task.status !== "working",
    )
    expect(done).toMatchObject({ taskId: a, status: "completed", statusMessage: "ended succeeded" })
    if (done.status !== "completed") throw new Error(`task ${a} ended ${done.status}`)
    const result = done.result as CallToolResult
    expect(structured(result)).toMatchObject({ task_id: a, status: "succeeded", report: "restart report" })
    // The same structured result and text the task's own tool gives, from the successor too.
    const own = await successor.call("task_result", { task_id: a })
    expect(structured(result)).toEqual(structured(own))
    expect(text(result)).toBe(text(own))

    const ended = await until(
      () => successor.get(b),
      (task) => task.status !== "working",
    )
    expect(ended.status).toBe("completed")
    expect(ended.statusMessage).toStartWith("ended interrupted")
    expect(ended.statusMessage).toContain(sessionB)
    if (ended.status !== "completed") throw new Error(`task ${b} ended ${ended.status}`)
    const interrupted = ended.result as CallToolResult
    expect(structured(interrupted).status).toBe("interrupted")
    expect(structured(interrupted).report).not.toContain("too late")
  } finally {
    await first.close().catch(() => undefined)
    await second?.close()
  }
}, 180_000)
