// Kill the MCP server (`bun src/cli/main.ts serve` over stdio) mid-task and start another: no record
// is lost. A session still working on the shared OpenCode server is followed to its result; one that
// is gone is marked interrupted with its session id; neither leaves its workspace locked.
import { expect, test } from "bun:test"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { connect as connectOpencode } from "../../src/opencode/client"
import { readServerRecord } from "../../src/opencode/server"
import { readJson } from "../../src/util/fs"
import { connectStdio, ROOT } from "../helpers/mcp"
import { LONG_TASK } from "../helpers/long-task"
import { write } from "../helpers/steps"
import { fileWorld } from "./_file-world"
import { lockFiles, makeRepo, structured } from "./_setup"

const world = fileWorld({
  restart: {
    turns: [
      {
        steps: [{ ...write("src/after.ts", "export const after = 1\n"), delayMs: 5000 }, { text: "restart report" }],
      },
    ],
  },
  long: LONG_TASK,
})

const serve = () =>
  connectStdio({ ...world.home.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" }, [
    process.execPath,
    `${ROOT}/src/cli/main.ts`,
    "serve",
  ])
const recordOf = (id: string) => readJson<TaskRecord>(`${world.home.paths.tasksDir}/${id}.json`)

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (ok(value) || Date.now() > deadline) return value
    await Bun.sleep(100)
  }
}

test("killing and restarting the MCP server mid-task loses no record", async () => {
  const followed = await makeRepo(world)
  const orphaned = await makeRepo(world)
  const first = await serve()
  let second: Awaited<ReturnType<typeof serve>> | undefined
  try {
    const a = structured(
      await first.client.callTool({
        name: "worker",
        arguments: { cwd: followed, task: "Add after.ts [script:restart]" },
      }),
    )
    const b = structured(
      await first.client.callTool({ name: "worker", arguments: { cwd: orphaned, task: "Slow [script:long]" } }),
    )
    expect([a.status, b.status]).toEqual(["running", "running"])
    const idA = String(a.task_id)
    const idB = String(b.task_id)
    const sessionB = (await until(
      () => recordOf(idB),
      (r) => Boolean(r?.sessionID),
    ))!.sessionID!
    await until(
      () => recordOf(idA),
      (r) => Boolean(r?.sessionID),
    )

    process.kill(first.pid, "SIGKILL")
    await until(async () => {
      try {
        process.kill(first.pid, 0)
        return false
      } catch {
        return true
      }
    }, Boolean)
    expect((await recordOf(idA))?.status).toBe("running")
    expect((await lockFiles(world)).length).toBe(2)

    // B's session disappears while no MCP server follows it.
    const server = (await readServerRecord(world.home.paths))!
    await connectOpencode(server, { standIns: world.home.paths.opencodeDirsDir }).session.delete({
      sessionID: sessionB,
      directory: (await recordOf(idB))!.workspace,
    })

    second = await serve()
    const list = structured(await second.client.callTool({ name: "task_list", arguments: {} })) as unknown as {
      tasks: { task_id: string }[]
    }
    expect(list.tasks.map((t) => t.task_id)).toEqual(expect.arrayContaining([idA, idB]))

    let status = structured(await second.client.callTool({ name: "task_status", arguments: { task_id: idA } }))
    for (let i = 0; i < 20 && status.status === "running"; i++)
      status = structured(
        await second.client.callTool({ name: "task_status", arguments: { task_id: idA, wait_seconds: 10 } }),
      )
    const resultA = structured(await second.client.callTool({ name: "task_result", arguments: { task_id: idA } }))
    expect(resultA.status).toBe("succeeded")
    expect(resultA.report).toBe("restart report")
    expect(resultA.files_changed).toEqual([{ path: "src/after.ts", change: "added" }])

    const recordB = await until(
      () => recordOf(idB),
      (r) => r?.status !== "running",
    )
    expect(recordB?.status).toBe("interrupted")
    expect(recordB?.note).toContain(sessionB)
    expect(recordB?.sessions).toContain(sessionB)
    expect(await lockFiles(world)).toEqual([])
  } finally {
    await first.close().catch(() => undefined)
    await second?.close()
  }
}, 120_000)
