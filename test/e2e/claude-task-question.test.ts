// A question asked by a delegated agent after its call went to the background, through the real Claude Code
// 2.1.332, interactive under tmux, offline on the scripted Anthropic API, on revision 2026-07-28. The scout
// outlasts the 1 s sync budget, so the call is the tasks extension's task; only then does its OpenCode session
// ask. Claude Code's tasks/get polling finds the task `input_required` with the relay's form, shows it as its
// own dialog, and sends the pick with tasks/update; the OpenCode session receives it and the report reaches the
// parent model through the client's task notification. Control: the person declines in the same dialog, and
// the question reaches OpenCode dismissed.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { askingTurns, QUESTION } from "../helpers/question"
import { until } from "../helpers/until"
import { type ClaudeTui, DIALOG, pickFirstOption, shows, submitDialog } from "./_claude-tui"
import { startScoutWorld, type ScoutWorld, type Turn } from "./_claude-scout"

const NO_ANSWER = "No answer from the person; reporting without one."
/** The question comes this long after the call: well past the 1 s sync budget, so from a background task. */
const ASK_AFTER_MS = 5000
/** The client's task notification arrives as a user message. */
const noted: Turn = { steps: [{ text: "Noted: {{userMessage}}" }] }

let world: ScoutWorld

beforeAll(async () => {
  const [asking, unanswered] = askingTurns(NO_ANSWER)
  const [ask, ...after] = asking!.steps
  world = await startScoutWorld({
    sessionMs: 0,
    scout: { turns: [{ steps: [{ ...ask!, delayMs: ASK_AFTER_MS }, ...after] }, unanswered!] },
    // A question waits for the person (task_respond's window) rather than being dismissed at once.
    config: { policy: { requireTier: false, relay: ["question"], respondWaitSeconds: 120 } },
  })
})

afterAll(async () => {
  await world?.stop()
})

/** A fresh Claude Code session whose scout went to the background and then asked, once the dialog shows. */
async function askedInDialog(name: string) {
  world.model.reset()
  world.model.setScript("parent", { turns: [world.scoutTurn, noted] })
  const tui: ClaudeTui = await world.tui(name)
  await tui.say("Ask the scout. [script:parent]")
  expect(await until(() => shows(tui, DIALOG), 90_000)).toBe(true)
  // The call had come back as a task before the question was asked.
  const [started] = world.model.toolResults()
  expect(started?.tool).toBe("mcp__orch__scout")
  expect(started?.output).toContain("started server-side task")
  expect(await shows(tui, `A delegated OpenCode agent asks: ${QUESTION.question}`)).toBe(true)
  await pickFirstOption(tui)
  return tui
}

/** The parent model's request carrying the task's report (the client's notification), once it came. */
async function reportRequest(text: string) {
  const carries = () =>
    world.model
      .stepRequests()
      .find((request) => request.api === "messages" && JSON.stringify(request.body.messages).includes(text))
  expect(await until(() => carries() !== undefined, 90_000)).toBe(true)
  return JSON.stringify(carries()!.body.messages)
}

const questionResult = () => world.model.toolResults().find((result) => result.tool === "question")

test("a background task's question is Claude Code's own dialog; the pick goes back with tasks/update and reaches OpenCode", async () => {
  const tui = await askedInDialog("answered")
  await submitDialog(tui)
  expect(await reportRequest("Asked.")).toContain("countWords")
  expect(questionResult()?.output).toContain("countWords")
  const sent = await tui.sent()
  expect(sent.some((message) => message.method === "initialize")).toBe(false)
  // One call only: the question went out through the task, and its answer came back in tasks/update.
  expect(sent.filter((message) => message.method === "tools/call")).toHaveLength(1)
  const updates = sent.filter((message) => message.method === "tasks/update")
  expect(updates).toHaveLength(1)
  expect((updates[0]!.params as { inputResponses?: unknown }).inputResponses).toEqual({
    question: { action: "accept", content: { q1: "countWords" } },
  })
}, 180_000)

test("control: the person declines the background task's dialog: the question reaches OpenCode dismissed", async () => {
  const tui = await askedInDialog("declined")
  await tui.press("Down")
  expect(await until(() => shows(tui, "❯ Decline"), 10_000)).toBe(true)
  await submitDialog(tui)
  expect(await reportRequest(NO_ANSWER)).not.toContain("countWords")
  expect(questionResult()?.output).toBe("The user dismissed this question")
}, 180_000)
