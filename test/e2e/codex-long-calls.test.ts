// What the real `codex exec` (Codex 0.171, offline on the scripted Responses API, the compiled binary
// as its stdio MCP server) does with the two things a delegation can need of its parent beyond a quick
// answer (README "Parent clients"):
// - a question: `exec` answers every elicitation `decline`, so the scout's question reaches OpenCode
//   dismissed and the scout still reports;
// - a call longer than the server's `tool_timeout_sec`: Codex gives its model its own timeout error, not
//   our result, and cancels the call (`notifications/cancelled`, read on the wire) before `exec` exits and
//   kills our server's process group: the cancel is on the record first, the watchdog finishes it when
//   the server could not, and the task ends cancelled, as asked, not left running. Control: with the
//   sync budget under the tool timeout (what install's registration sets up), the call comes back
//   `running` in time and the parent follows the task to its report with task_status and task_result.
import { beforeAll, expect, test } from "bun:test"
import { ensureServer } from "../../src/opencode/server"
import { isFinished } from "../../src/engine/records/status"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { codexExec, codexWorld, ourServer, scriptedProvider, type Steps, TOOL } from "./_codex"
import { askingTurns, QUESTION } from "../helpers/question"
import { taskRecords } from "../helpers/records"
import { until } from "../helpers/until"

const REPORT = "tally is in README.md"
/**
 * Codex's timeout for our tools: the default the product assumes for Codex (budgets.ts), short enough to
 * outlast. 20 s was less than a start takes on a loaded machine (policy, readiness, the shared server's
 * reads, the session): at a load average of 24 on 2 cores no record existed yet when it fired, which no
 * sync budget can answer before.
 */
const TOOL_TIMEOUT_S = 60
/** The slow scout's session answers after this long: past the tool timeout. */
const SESSION_MS = 75_000

const world = codexWorld({
  files: { "README.md": "# tally\n" },
  scripts: () => ({
    asks: { turns: askingTurns("No answer came.") },
    slow: { turns: [{ steps: [{ text: REPORT, delayMs: SESSION_MS }] }] },
  }),
  // A dismissed question is answered at once, not held for task_respond.
  home: { config: { policy: { requireTier: false, relay: ["question"], respondWaitSeconds: 0 } } },
  config: (modelUrl) => [...scriptedProvider(modelUrl), ...ourServer(TOOL_TIMEOUT_S)],
})

// The shared server started before the first call, as a user's usually is: its start (seconds on a loaded
// machine) would otherwise count against the first call's tool timeout.
beforeAll(() => ensureServer({ paths: world.home.paths, binary: "opencode", env: world.home.env }), 60_000)

/** One `codex exec` whose parent plays `steps`, our server's sync budget set to `budgetMs`, Codex's tool timeout to `toolTimeoutS`. */
async function codex(name: string, steps: Steps, budgetMs: number, toolTimeoutS = TOOL_TIMEOUT_S) {
  const budget = `mcp_servers.opencode-agents.env.OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS="${budgetMs}"`
  const timeout = `mcp_servers.opencode-agents.tool_timeout_sec=${toolTimeoutS}`
  const result = await codexExec(world, name, steps, { flags: ["-c", budget, "-c", timeout] })
  return { result, outputs: world.model.toolResults().filter((r) => r.tool.startsWith(TOOL(""))) }
}

/** The task record a scout of this brief made, once it has ended. */
async function endedTask(brief: string): Promise<TaskRecord | undefined> {
  const find = async () => (await taskRecords(world.home.paths.tasksDir)).find((r) => r.brief?.includes(brief))
  await until(async () => isFinished((await find())?.status ?? "running"), 30_000)
  return find()
}

test("codex exec declines the scout's question: OpenCode's question tool returns it dismissed, and the scout reports", async () => {
  const brief = "Name it. [script:asks]"
  const steps: Steps = [
    { tool: TOOL("scout"), args: { cwd: world.repo, task: brief } },
    { text: "Got: {{lastToolOutput}}" },
  ]
  // The question is the person's while the call waits: the call waits out the start and the session up to
  // it (over 45 s at a load average of 24), under a tool timeout that leaves it room.
  const { result, outputs } = await codex("parent_asks", steps, 100_000, 120)
  expect(result.code).toBe(0)
  expect(JSON.parse(outputs[0]!.output.slice(outputs[0]!.output.indexOf("{")))).toMatchObject({
    status: "succeeded",
    report: "No answer came.",
  })
  const record = await endedTask(brief)
  expect(record?.progress).toContain(`asked the person: ${QUESTION.question}`)
  expect(record?.progress).toContain(`refused a question request (${QUESTION.question}): the person declined`)
  expect(world.model.toolResults().find((r) => r.tool === "question")?.output).toBe("The user dismissed this question")
}, 300_000)

test("control: a sync budget under the tool timeout returns `running` in time, and the parent follows it to the report", async () => {
  const brief = "Where? [script:slow] (followed)"
  const polls = Array.from({ length: 20 }, () => ({
    tool: TOOL("task_status"),
    args: { task_id: "{{lastTaskId}}", wait_seconds: 5 },
  }))
  const steps: Steps = [
    { tool: TOOL("scout"), args: { cwd: world.repo, task: brief } },
    ...polls,
    { tool: TOOL("task_result"), args: { task_id: "{{lastTaskId}}" } },
    { text: "Got: {{lastToolOutput}}" },
  ]
  const { result, outputs } = await codex("parent_followed", steps, 5000)
  expect(result.code).toBe(0)
  expect(outputs[0]?.output).toContain('"status":"running"')
  expect(outputs.every((output) => !output.output.includes("timed out awaiting"))).toBe(true)
  expect(outputs.at(-1)?.tool).toBe(TOOL("task_result"))
  expect(outputs.at(-1)?.output).toContain(REPORT)
  expect(result.stdout).toContain(REPORT)
  expect((await endedTask(brief))?.status).toBe("succeeded")
}, 300_000)

// Last: were the cancel lost, the held call's session would run on after the test beside a later call.
test("a call held past tool_timeout_sec: Codex's model gets Codex's timeout, not our result, and Codex's cancel ends the task cancelled", async () => {
  const brief = "Where? [script:slow] (held)"
  const steps: Steps = [
    { tool: TOOL("scout"), args: { cwd: world.repo, task: brief } },
    { text: "Got: {{lastToolOutput}}" },
  ]
  const { result, outputs } = await codex("parent_held", steps, 120_000)
  expect(result.code).toBe(0)
  expect(outputs[0]?.output).toContain(`timed out awaiting tools/call after ${TOOL_TIMEOUT_S}s`)
  expect(outputs[0]?.output).not.toContain(REPORT)
  // Settled by serve, or by the watchdog when exec's exit killed serve first; before, the watchdog found the
  // session aborted with no cancel on record and called it interrupted.
  const ended = await endedTask(brief)
  expect(ended?.status).toBe("cancelled")
  expect(ended?.cancelAskedAt).toBeDefined()
}, 300_000)
