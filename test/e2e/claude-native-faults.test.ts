// The real Claude Code 2.1.332, interactive under tmux, offline on the scripted Anthropic API, with a
// long scout running as a native MCP task (revision 2026-07-28), as in claude-native-tasks.test.ts,
// when something stops it. Cancel: the parent model calls Claude Code's own TaskStop with the background
// task id the client told it; the client sends tasks/cancel, the record ends cancelled and the OpenCode
// session stops. A killed server: Claude Code does not restart a stdio server by itself; it keeps the
// task and waits (up to 300 s) for the server to come back, and `/mcp` → Reconnect starts a successor,
// which answers tasks/get for its predecessor's task from the record, so the report still reaches the
// parent model. Control: unstopped, the same scout finishes with its report (README "Native MCP tasks").
import { afterAll, beforeAll, expect, test } from "bun:test"
import { connect as connectOpencode } from "../../src/opencode/client"
import { readServerRecord } from "../../src/opencode/server"
import { taskRecords } from "../helpers/records"
import { until } from "../helpers/until"
import { REPORT, startScoutWorld, type ScoutWorld, type Turn } from "./_claude-scout"

/** The scout's session answers after this long: time to stop it first. */
const SESSION_MS = 15_000
/** The client's task notification arrives as a user message. */
const noted: Turn = { steps: [{ text: "Noted: {{userMessage}}" }] }

let world: ScoutWorld

beforeAll(async () => {
  world = await startScoutWorld({ sessionMs: SESSION_MS })
})

afterAll(async () => {
  await world?.stop()
})

const reportReached = () =>
  world.model
    .stepRequests()
    .some((request) => request.api === "messages" && JSON.stringify(request.body.messages).includes(REPORT))

async function start(name: string) {
  world.model.reset()
  world.model.setScript("parent", { turns: [world.scoutTurn, noted] })
  const tui = await world.tui(name)
  await tui.say("Ask the scout. [script:parent]")
  expect(await until(() => world.model.toolResults().length > 0, 90_000)).toBe(true)
  const started = world.model.toolResults()[0]!.output
  // What the client tells the model: our task id, and its own background task id to stop it by.
  const taskId = /started server-side task (task_\w+)/.exec(started)?.[1]
  const backgroundId = /use TaskStop with task_id "(\w+)"/.exec(started)?.[1]
  expect(taskId).toBeDefined()
  expect(backgroundId).toBeDefined()
  return { tui, taskId: taskId!, backgroundId: backgroundId! }
}

const recordOf = async (id: string) => (await taskRecords(world.home.paths.tasksDir)).find((record) => record.id === id)

async function busy(sessionID: string): Promise<boolean> {
  const server = await readServerRecord(world.home.paths)
  const status = await connectOpencode(server!, { standIns: world.home.paths.opencodeDirsDir }).session.status({
    directory: world.repo,
  })
  const state = (status.data as Record<string, { type: string }> | undefined)?.[sessionID]
  return state !== undefined && state.type !== "idle"
}

/** The task's OpenCode session, once it is working. */
async function workingSession(taskId: string): Promise<string> {
  expect(await until(async () => (await recordOf(taskId))?.sessionID !== undefined, 30_000)).toBe(true)
  const sessionID = (await recordOf(taskId))!.sessionID!
  // Control for the cancel: the session is busy before it.
  expect(await until(() => busy(sessionID), 30_000)).toBe(true)
  return sessionID
}

test("TaskStop on the native task sends tasks/cancel: the record ends cancelled, the session stops", async () => {
  const { tui, taskId, backgroundId } = await start("cancel")
  const sessionID = await workingSession(taskId)
  world.model.setScript("parent", {
    turns: [
      world.scoutTurn,
      { steps: [{ tool: "TaskStop", args: { task_id: backgroundId } }, { text: "Stopped: {{lastToolOutput}}" }] },
      noted,
    ],
  })
  await tui.say("Stop the scout.")
  const cancels = async () => (await tui.sent()).filter((m) => m.method === "tasks/cancel")
  expect(await until(async () => (await cancels()).length > 0, 30_000)).toBe(true)
  expect((await cancels()).every((m) => m.params?.taskId === taskId)).toBe(true)
  expect(await until(async () => (await recordOf(taskId))?.status === "cancelled", 30_000)).toBe(true)
  expect(await until(async () => !(await busy(sessionID)), 30_000)).toBe(true)
  const stopped = world.model.toolResults().find((result) => result.tool === "TaskStop")
  expect(stopped?.output).toContain(`Task ${backgroundId}`)
  expect(stopped?.output).toContain("is stopped")
  // The scout's report never comes: its session was stopped before it answered.
  await Bun.sleep(SESSION_MS)
  expect(reportReached()).toBe(false)
  expect((await recordOf(taskId))?.status).toBe("cancelled")
}, 120_000)

test("control: without the cancel the same scout finishes and its report reaches the parent model", async () => {
  const { tui, taskId } = await start("control")
  expect(await until(reportReached, 60_000)).toBe(true)
  expect((await recordOf(taskId))?.status).toBe("succeeded")
  expect((await tui.sent()).some((m) => m.method === "tasks/cancel")).toBe(false)
  expect(world.model.toolResults().map((result) => result.tool)).toEqual(["mcp__orch__scout"])
}, 120_000)

test("serve SIGKILLed mid-task: Claude Code waits; /mcp Reconnect starts a successor that brings the report", async () => {
  const { tui, taskId } = await start("kill")
  const [first, ...others] = await tui.servers()
  expect(first).toBeDefined()
  expect(others).toEqual([])
  process.kill(first!, "SIGKILL")
  const discovers = async () => (await tui.sent()).filter((m) => m.method === "server/discover").length
  // Claude Code does not restart a stdio server by itself: after its failed polls it waits.
  await Bun.sleep(8000)
  expect(await tui.servers()).toEqual([])
  expect(await discovers()).toBe(1)
  expect(reportReached()).toBe(false)
  const before = (await tui.sent()).length
  // `/mcp`, Enter on the one server, Enter on "Reconnect".
  await tui.say("/mcp")
  await Bun.sleep(1500)
  await tui.say("")
  await Bun.sleep(1500)
  expect(await tui.screen()).toContain("Reconnect")
  await tui.say("")
  expect(await until(reportReached, 60_000)).toBe(true)
  const successors = await tui.servers()
  expect(successors.length).toBe(1)
  expect(successors[0]).not.toBe(first)
  // The successor discovered afresh and was polled for its predecessor's task, which it answered.
  const after = (await tui.sent()).slice(before)
  expect(after.findIndex((m) => m.method === "server/discover")).toBe(0)
  expect(after.some((m) => m.method === "tasks/get" && m.params?.taskId === taskId)).toBe(true)
  expect((await recordOf(taskId))?.status).toBe("succeeded")
  // The parent model called nothing but the scout.
  expect(world.model.toolResults().map((result) => result.tool)).toEqual(["mcp__orch__scout"])
}, 150_000)
