// The real Claude Code 2.1.332, interactive under tmux, offline on the scripted Anthropic API, running a
// long scout through the compiled binary as a native MCP task of protocol 2026-07-28: the server answers
// `server/discover`, the scout outlasts the sync budget, the call comes back as the tasks extension's
// task, and Claude Code's own tasks/get polling brings the report to the parent model, which never calls
// task_status. Control: with CLAUDE_CODE_DISABLE_MCP_TASKS=1 the discover is refused as before, the client
// falls back to `initialize`, the same call returns `running` as it does today, and the parent model
// follows it itself. Both runs count the parent model's requests and input
// tokens from the scout call to the report (README "Native MCP tasks").
import { afterAll, beforeAll, expect, test } from "bun:test"
import { rm } from "node:fs/promises"
import { createRepository } from "../../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import { startScriptedModel, type RecordedRequest, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import { isFinished } from "../../src/engine/tasks"
import { TEST_PATH } from "../helpers/mcp"
import { taskRecords } from "../helpers/records"
import { until } from "../helpers/until"
import { startClaudeTui, type ClaudeTui } from "./_claude-tui"

const REPORT = "tally is in README.md"
/** The scout's session answers after this long: well past the sync budget below. */
const SESSION_MS = 8000
const SYNC_BUDGET = { OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" }
const TOOLS = ["mcp__orch__scout", "mcp__orch__task_status", "mcp__orch__task_result"]

let model: ScriptedModel
let home: IsolatedHome
let repo: string
const tuis: ClaudeTui[] = []

let parentTurn: { steps: ScriptInput["turns"][number]["steps"] }

beforeAll(async () => {
  repo = await createRepository("oc-orch-repo-", { "README.md": "# tally\n" })
  parentTurn = {
    steps: [
      { tool: "mcp__orch__scout", args: { cwd: repo, task: "Where is tally? [script:slow]" } },
      { text: "Scout answered: {{lastToolOutput}}" },
    ],
  }
  model = await startScriptedModel({
    scripts: {
      slow: { turns: [{ steps: [{ text: REPORT, delayMs: SESSION_MS }] }] },
      parent: {
        turns: [
          parentTurn,
          // The client's task notification arrives as the next user message.
          { steps: [{ text: "Noted: {{userMessage}}" }] },
        ],
      },
    },
  })
  home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
})

afterAll(async () => {
  for (const tui of tuis) await tui.stop()
  if (home) await stopServer(home.paths)
  await model?.stop()
  await home?.dispose()
  if (repo) await rm(repo, { recursive: true, force: true })
})

/** The parent model's requests (Claude Code's, on the Messages API), not OpenCode's. */
const parentRequests = () => model.stepRequests().filter((request) => request.api === "messages")

const seen = (request: RecordedRequest, text: string) => JSON.stringify(request.body.messages).includes(text)

function measure(requests: RecordedRequest[]) {
  return {
    requests: requests.length,
    inputTokens: requests.reduce((sum, request) => sum + (request.billed?.prompt_tokens ?? 0), 0),
  }
}

async function start(name: string, env: Record<string, string> = {}) {
  model.reset()
  const tui = await startClaudeTui({ home, model, cwd: repo, name, env, serveEnv: SYNC_BUDGET, allowedTools: TOOLS })
  tuis.push(tui)
  return tui
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
  const [started] = model.toolResults()
  expect(started?.tool).toBe("mcp__orch__scout")
  expect(started?.output).toContain(`started server-side task ${polls[0]?.params?.taskId}`)
  expect(started?.output).not.toContain(REPORT)
  // The report reached the parent model through the client's polling; it called nothing but the scout.
  expect(reached).toBe(true)
  expect(model.toolResults().map((result) => result.tool)).toEqual(["mcp__orch__scout"])
  const figures = measure(parentRequests())
  console.log(`native task: parent requests ${figures.requests}, input tokens ${figures.inputTokens}`)
}, 180_000)

test("control: with CLAUDE_CODE_DISABLE_MCP_TASKS=1 the call returns running and the parent model follows it", async () => {
  const tui = await start("disabled", { CLAUDE_CODE_DISABLE_MCP_TASKS: "1" })
  await tui.say("Ask the scout. [script:parent]")
  expect(await until(() => model.toolResults().length > 0 && parentRequests().length >= 2, 90_000)).toBe(true)
  const running = JSON.parse(model.toolResults()[0]!.output) as { status?: string; task_id?: string; next?: string }
  expect(running.status).toBe("running")
  expect(running.next).toContain("task_status")
  const sent = await tui.sent()
  const discover = sent.find((m) => m.method === "server/discover")
  expect(discover?.params?._meta?.["io.modelcontextprotocol/clientCapabilities"]).not.toHaveProperty("extensions")
  // Refused, as it always was, so the client fell back to 2025-11-25.
  expect(sent.some((m) => m.method === "initialize")).toBe(true)
  expect(sent.some((m) => m.method === "tasks/get")).toBe(false)
  // The parent model follows the task as the result's next: line says, at its cheapest: one task_status
  // once the task has ended, then task_result. Scripted tool arguments are literal, so the task id goes
  // into the session's next turn, played for the next prompt.
  const id = running.task_id!
  const ended = async () =>
    (await taskRecords(home.paths.tasksDir)).some((record) => record.id === id && isFinished(record.status))
  expect(await until(ended, 60_000)).toBe(true)
  model.setScript("parent", {
    turns: [
      parentTurn,
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
  expect(model.toolResults().map((result) => result.tool)).toEqual([
    "mcp__orch__scout",
    "mcp__orch__task_status",
    "mcp__orch__task_result",
  ])
  const figures = measure(parentRequests())
  console.log(`control: parent requests ${figures.requests}, input tokens ${figures.inputTokens}`)
}, 180_000)
