// The task records are the truth and the index is derived (sqlite-index.ts): a continued task whose index
// row still says `succeeded` (what a lost index write leaves) while its owner, a compiled `serve`, is
// SIGKILLed mid-turn, with its watchdog gone first, on the real OpenCode with the scripted model. The
// next serve lists it running while it runs, takes it over and finishes its turn. Control: the raw
// index, which listings and recovery answered from, hides it from both.
import { Database } from "bun:sqlite"
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { createRepository } from "../../src/model/demo"
import { ensureServer } from "../../src/opencode/server"
import { alive } from "../../src/util/process"
import { watchdogOf } from "../helpers/leftovers"
import { connectStdio, type Connected } from "../helpers/mcp"
import { until } from "../helpers/until"
import { type HomeWorld, startHome, stopHome } from "../helpers/world"

const TURN_MS = 15_000
let world: HomeWorld
const open: Connected[] = []

beforeAll(async () => {
  world = await startHome({
    // The first turn answers at once; the continued one takes a while, so it is killed and taken over mid-turn.
    two_turns: {
      turns: [{ steps: [{ text: "first report" }] }, { steps: [{ text: "second report", delayMs: TURN_MS }] }],
    },
  })
  // The shared server started here, given the time a loaded machine needs; every serve below reuses it.
  await ensureServer({ paths: world.home.paths, binary: "opencode", env: world.home.env, startTimeoutMs: 180_000 })
}, 240_000)

afterAll(async () => {
  for (const connected of open) await connected.close().catch(() => undefined)
  await stopHome(world)
})

const serve = async () => {
  const connected = await connectStdio(world.home.env)
  open.push(connected)
  return connected
}
const call = async (mcp: Connected, name: string, args: Record<string, unknown>) =>
  (await mcp.client.callTool({ name, arguments: args }, { timeout: 120_000 })) as CallToolResult
const structured = (result: CallToolResult) => result.structuredContent as Record<string, unknown>
const record = async (id: string) =>
  JSON.parse(await Bun.file(`${world.home.paths.tasksDir}/${id}.json`).text()) as TaskRecord
const indexFile = () => `${world.home.paths.tasksDir}/.index/records.sqlite`

test("a continued task whose row says succeeded, its owner SIGKILLed: the next serve lists it running and takes it over", async () => {
  const cwd = await createRepository("oc-orch-drift-", { "README.md": "# r\n" })
  world.dirs.push(cwd)
  const first = await serve()
  const started = structured(await call(first, "scout", { cwd, task: "Look around. [script:two_turns]" }))
  expect(started.status).toBe("succeeded")
  const id = String(started.task_id)
  void call(first, "task_continue", { task_id: id, task: "And once more." }).catch(() => undefined)
  // Mid-turn: the continued turn's step has reached the scripted model, so OpenCode is working on it. A serve
  // killed before its prompt reached OpenCode leaves a turn nobody started, which the takeover rightly calls
  // interrupted (seen once on a fast run: the record said turn 2 a moment before the prompt was sent).
  expect(
    await until(async () => (await record(id)).turns === 2 && world.model.stepRequests().length >= 2, 60_000),
  ).toBe(true)
  expect((await record(id)).status).toBe("running")
  // Its watchdog first, then the serve: nobody follows the task any more.
  const watchdog = await watchdogOf(first.pid)
  if (watchdog) process.kill(watchdog, "SIGKILL")
  process.kill(first.pid, "SIGKILL")
  expect(await until(() => !alive(first.pid), 10_000)).toBe(true)
  // What a lost index write leaves: the row of the finished first turn.
  const db = new Database(indexFile())
  db.query("UPDATE tasks SET status = 'succeeded', finished = 1 WHERE id = ?").run(id)
  // Control: the raw index hides it from the unfinished rows (what recovery read) and from status=running.
  expect(db.query("SELECT count(*) AS n FROM tasks WHERE finished = 0 AND id = ?").get(id)).toEqual({ n: 0 })
  expect(db.query("SELECT count(*) AS n FROM tasks WHERE status = 'running' AND id = ?").get(id)).toEqual({ n: 0 })
  db.close()
  expect((await record(id)).status).toBe("running")

  const next = await serve()
  const running = structured(await call(next, "task_list", { status: "running" }))
  const listed = (running.tasks as { task_id: string }[]).map((task) => task.task_id)
  // Listed while it runs (or, on a slow machine, already finished by the takeover).
  if ((await record(id)).status === "running") expect(listed).toContain(id)
  expect(await until(async () => (await record(id)).status !== "running", 120_000)).toBe(true)
  const done = await record(id)
  expect(done.status).toBe("succeeded")
  expect(done.ownerPid).toBe(next.pid)
  expect(done.turns).toBe(2)
  expect(done.result?.report).toBeTruthy()
  const finished = structured(await call(next, "task_list", { status: "succeeded" }))
  expect((finished.tasks as { task_id: string }[]).map((task) => task.task_id)).toContain(id)
}, 400_000)
