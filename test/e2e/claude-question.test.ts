// A delegated agent's question reaching the person through the real Claude Code 2.1.332, interactive under
// tmux, offline on the scripted Anthropic API, with the compiled binary as its MCP server and the real
// OpenCode behind it. On protocol 2026-07-28 (the client opens with server/discover) the scout call comes
// back `input_required` (src/mcp/input-rounds.ts); Claude Code shows the form as its own dialog ("MCP
// server "orch" requests your input"), the pick typed into it goes back in a second tools/call with the
// `requestState`, the OpenCode session receives it, and the report reaches the parent model. Controls: the
// person declining in the same dialog (the question reaches OpenCode dismissed), and the same question on
// 2025-11-25 (MCP_PROTOCOL_NEGOTIATION=legacy: the client initializes, and the server asks with
// elicitation/create in the middle of the call) in the same dialog.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { rm } from "node:fs/promises"
import { createRepository } from "../../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import { TEST_PATH } from "../helpers/mcp"
import { askingTurns, QUESTION } from "../helpers/question"
import { until } from "../helpers/until"
import { type ClaudeTui, DIALOG, pickFirstOption, shows, startClaudeTui, submitDialog } from "./_claude-tui"

const ANSWERED = `"${QUESTION.question}"="countWords"`
const NO_ANSWER = "No answer from the person; reporting without one."

let model: ScriptedModel
let home: IsolatedHome
let repo: string
const tuis: ClaudeTui[] = []

beforeAll(async () => {
  repo = await createRepository("oc-orch-repo-", { "README.md": "# tally\n" })
  model = await startScriptedModel({
    scripts: {
      // The OpenCode scout: asks, then reports what the question tool returned.
      ask: { turns: askingTurns(NO_ANSWER) },
      // Claude Code's own turn: delegate to the scout, then say what it returned.
      parent: {
        turns: [
          {
            steps: [
              { tool: "mcp__orch__scout", args: { cwd: repo, task: "Find out what is needed. [script:ask]" } },
              { text: "Scout said: {{lastToolOutput}}" },
            ],
          },
        ],
      },
    },
  })
  // Questions are relayed; one no person answers is dismissed at once, as before task_respond.
  home = await createIsolatedHome({
    modelUrl: model.url,
    env: { PATH: TEST_PATH },
    config: { policy: { requireTier: false, relay: ["question"], respondWaitSeconds: 0 } },
  })
})

afterAll(async () => {
  for (const tui of tuis) await tui.stop()
  await stopServer(home.paths)
  await model.stop()
  await home.dispose()
  await rm(repo, { recursive: true, force: true })
})

/** A fresh Claude Code session that has asked the scout, once the question's dialog is on its screen. */
async function askedInDialog(name: string, env: Record<string, string> = {}) {
  model.reset()
  const tui = await startClaudeTui({ home, model, cwd: repo, name, env, allowedTools: ["mcp__orch__scout"] })
  tuis.push(tui)
  await tui.say("Ask the scout. [script:parent]")
  expect(await until(() => shows(tui, DIALOG), 90_000)).toBe(true)
  expect(await shows(tui, `A delegated OpenCode agent asks: ${QUESTION.question}`)).toBe(true)
  await pickFirstOption(tui)
  return tui
}

/** The report the parent model received from the scout (its structured result), once it reached it. */
async function scoutSaid() {
  expect(await until(() => model.toolResults().some((result) => result.tool === "mcp__orch__scout"), 90_000)).toBe(true)
  const output = model.toolResults().find((result) => result.tool === "mcp__orch__scout")!.output
  return (JSON.parse(output) as { report: string }).report
}

const questionResult = () => model.toolResults().find((result) => result.tool === "question")

test("on 2026-07-28 the question is Claude Code's own dialog; the pick reaches the OpenCode session in the next round", async () => {
  const tui = await askedInDialog("rounds")
  await submitDialog(tui)
  expect(await scoutSaid()).toContain(ANSWERED)
  expect(questionResult()?.output).toContain("countWords")
  const sent = await tui.sent()
  expect(sent.some((message) => message.method === "server/discover")).toBe(true)
  expect(sent.some((message) => message.method === "initialize")).toBe(false)
  // Two rounds of one call: the second carries the person's answer and the sealed state.
  const calls = sent.filter((message) => message.method === "tools/call")
  expect(calls).toHaveLength(2)
  const second = calls[1]!.params as Record<string, unknown>
  expect(typeof second.requestState).toBe("string")
  expect(Object.values(second.inputResponses as Record<string, unknown>)).toEqual([
    { action: "accept", content: { q1: "countWords" } },
  ])
}, 180_000)

test("control: the person declines in the same dialog: the question reaches OpenCode dismissed, the report has no answer", async () => {
  const tui = await askedInDialog("declined")
  await tui.press("Down")
  expect(await until(() => shows(tui, "❯ Decline"), 10_000)).toBe(true)
  await submitDialog(tui)
  const said = await scoutSaid()
  expect(said).toContain(NO_ANSWER)
  expect(said).not.toContain(ANSWERED)
  expect(questionResult()?.output).toBe("The user dismissed this question")
}, 180_000)

test("control: on 2025-11-25 the server asks in the middle of the call, and the same dialog's pick arrives the same", async () => {
  const tui = await askedInDialog("legacy", { MCP_PROTOCOL_NEGOTIATION: "legacy" })
  await submitDialog(tui)
  expect(await scoutSaid()).toContain(ANSWERED)
  const sent = await tui.sent()
  expect(sent.some((message) => message.method === "initialize")).toBe(true)
  // One call, no rounds: the answer came as the reply to the server's own elicitation/create.
  const calls = sent.filter((message) => message.method === "tools/call")
  expect(calls).toHaveLength(1)
  expect((calls[0]!.params as Record<string, unknown>).requestState).toBeUndefined()
  expect(sent.some((message) => (message as { result?: { action?: string } }).result?.action === "accept")).toBe(true)
}, 180_000)
