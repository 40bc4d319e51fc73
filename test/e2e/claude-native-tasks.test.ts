// The real Claude Code 2.1.332, interactive under tmux, offline on the scripted Anthropic API, running a
// long scout through the compiled binary as a native MCP task of protocol 2026-07-28: the server answers
// `server/discover`, the scout outlasts the sync budget, the call comes back as the tasks extension's
// task, and Claude Code's own tasks/get polling brings the report to the parent model, which never calls
// task_status. Control: with CLAUDE_CODE_DISABLE_MCP_TASKS=1 the client still opens 2026-07-28 but declares
// no extension, the same call returns `running` as it does for any client without tasks, and the parent model
// follows it itself. Both runs count the parent model's requests and input
// tokens from the scout call to the report (README "Native MCP tasks").
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { RecordedRequest } from "../../src/model/server"
import { isFinished } from "../../src/engine/records/status"
import { taskRecords } from "../helpers/records"
import { until } from "../helpers/until"
import { REPORT, startScoutWorld, type ScoutWorld } from "./_claude-scout"

/** The scout's session answers after this long: well past the sync budget. */
const SESSION_MS = 8000

let world: ScoutWorld

beforeAll(async () => {
  world = await startScoutWorld({ sessionMs: SESSION_MS })
})

afterAll(async () => {
  await world?.stop()
})

/** The parent model's requests (Claude Code's, on the Messages API), not OpenCode's. */
const parentRequests = () => world.model.stepRequests().filter((request) => request.api === "messages")

const seen = (request: RecordedRequest, text: string) => JSON.stringify(request.body.messages).includes(text)

function measure(requests: RecordedRequest[]) {
  return {
    requests: requests.length,
    inputTokens: requests.reduce((sum, request) => sum + (request.billed?.prompt_tokens ?? 0), 0),
  }
}

async function start(name: string, env: Record<string, string> = {}) {
  world.model.reset()
  return world.tui(name, env)
}

test("a scout outlasting the sync budget runs as a native task: Claude Code polls, the parent model does not", async () => {
  const tui = await start("native")
  await tui.say("Ask the scout. [script:parent]")
  const reached = await until(() => parentRequests().some((request) => seen(request, REPORT)), 90_000)
  const sent = await tui.sent()
  const discover = sent.find((m) => m.method === "server/discover")
  const capabilities = discover?.params?._meta?.["io.modelcontextprotocol/clientCapabilities"] as {
    extensions?: Record<string, unknown>
  }
  expect(capabilities?.extensions).toEqual({ "io.modelcontextprotocol/tasks": {} })
  expect(sent.some((m) => m.method === "initialize")).toBe(false)
  const calls = sent.filter((m) => m.method === "tools/call")
  expect(calls.map((call) => [call.params?.name, call.params?.task])).toEqual([["scout", undefined]])
  const polls = sent.filter((m) => m.method === "tasks/get")
  expect(polls.length).toBeGreaterThan(0)
  // What the parent model got from the call: the client's own note that the task went to the background.
  const [started] = world.model.toolResults()
  expect(started?.tool).toBe("mcp__orch__scout")
  expect(started?.output).toContain(`started server-side task ${polls[0]?.params?.taskId}`)
  expect(started?.output).not.toContain(REPORT)
  // The report reached the parent model through the client's polling; it called nothing but the scout.
  expect(reached).toBe(true)
  expect(world.model.toolResults().map((result) => result.tool)).toEqual(["mcp__orch__scout"])
  const figures = measure(parentRequests())
  console.log(`native task: parent requests ${figures.requests}, input tokens ${figures.inputTokens}`)
}, 180_000)

test("control: with CLAUDE_CODE_DISABLE_MCP_TASKS=1 the call returns running and the parent model follows it", async () => {
  const tui = await start("disabled", { CLAUDE_CODE_DISABLE_MCP_TASKS: "1" })
  await tui.say("Ask the scout. [script:parent]")
  expect(await until(() => world.model.toolResults().length > 0 && parentRequests().length >= 2, 90_000)).toBe(true)
  const running = JSON.parse(world.model.toolResults()[0]!.output) as {
    status?: string
    task_id?: string
    next?: string
  }
  expect(running.status).toBe("running")
  expect(running.next).toContain("task_status")
  const sent = await tui.sent()
  const discover = sent.find((m) => m.method === "server/discover")
  expect(discover?.params?._meta?.["io.modelcontextprotocol/clientCapabilities"]).not.toHaveProperty("extensions")
  // Answered: the revision without the extension, so no task.
  expect(sent.some((m) => m.method === "initialize")).toBe(false)
  expect(sent.some((m) => m.method === "tasks/get")).toBe(false)
  // The parent model follows the task as the result's next: line says, at its cheapest: one task_status
  // once the task has ended, then task_result. Scripted tool arguments are literal, so the task id goes
  // into the session's next turn, played for the next prompt.
  const id = running.task_id!
  const ended = async () =>
    (await taskRecords(world.home.paths.tasksDir)).some((record) => record.id === id && isFinished(record.status))
  expect(await until(ended, 60_000)).toBe(true)
  world.model.setScript("parent", {
    turns: [
      world.scoutTurn,
      {
        steps: [
          { tool: "mcp__orch__task_status", args: { task_id: id } },
          { tool: "mcp__orch__task_result", args: { task_id: id } },
          { text: "Scout answered: {{lastToolOutput}}" },
        ],
      },
    ],
  })
  await tui.say("Follow the scout.")
  const reached = await until(() => parentRequests().some((request) => seen(request, REPORT)), 90_000)
  expect(reached).toBe(true)
  expect(world.model.toolResults().map((result) => result.tool)).toEqual([
    "mcp__orch__scout",
    "mcp__orch__task_status",
    "mcp__orch__task_result",
  ])
  const figures = measure(parentRequests())
  console.log(`control: parent requests ${figures.requests}, input tokens ${figures.inputTokens}`)
}, 180_000)
