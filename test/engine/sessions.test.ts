import { expect, test } from "bun:test"
import { sessionRow, type SessionFacts } from "../../src/engine/sessions"

const NOW = Date.parse("2026-11-30T12:00:00Z")
const ago = (s: number) => NOW - s * 1000
const facts = (latest?: SessionFacts["latest"], updated = ago(500)): SessionFacts => ({
  id: "ses_1",
  title: "t",
  directory: "/w",
  created: ago(600),
  updated,
  latest,
})
const STALE = 300_000

test.each([
  ["no message yet", facts(), "idle", 500],
  ["a completed answer", facts({ role: "assistant", created: ago(520), completed: ago(510) }), "idle", 500],
  ["an answer in progress, recent", facts({ role: "assistant", created: ago(20) }), "busy", 20],
  [
    "an answer in progress, silent past the threshold",
    facts({ role: "assistant", created: ago(400) }, ago(400)),
    "stale",
    400,
  ],
  ["a user message not yet answered", facts({ role: "user", created: ago(5) }), "busy", 5],
] as const)("%s: %s", (_, input, state, idle) => {
  const row = sessionRow(input, NOW, STALE)
  expect(row.state).toBe(state)
  expect(row.idle_s).toBe(idle)
  expect(row.age_s).toBe(600)
})

test("our task's liveness counts as an event: a long answer still streaming is busy, not stale", () => {
  const row = sessionRow(facts({ role: "assistant", created: ago(400) }, ago(400)), NOW, STALE, {
    id: "task_x",
    activity: { step: 3, at: new Date(ago(10)).toISOString() },
  })
  expect(row).toMatchObject({ state: "busy", idle_s: 10, task_id: "task_x" })
})

test("tokens as stats counts them (cache with input, reasoning with output) and the cost; none known counts zero", () => {
  const spent = {
    ...facts(),
    tokens: { input: 1000, output: 200, reasoning: 30, cache: { read: 400, write: 5 } },
    cost: 0.0123,
  }
  expect(sessionRow(spent, NOW, STALE)).toMatchObject({ tokens_in: 1405, tokens_out: 230, cost: 0.0123 })
  expect(sessionRow(facts(), NOW, STALE)).toMatchObject({ tokens_in: 0, tokens_out: 0, cost: 0 })
})
