// A task's spending: each finished step counts once, whatever else the session emits; attempts add up
// across sessions; a takeover adds the steps nobody saw, once each; a transcript and the events are
// reconciled to the larger of the two; and the first cap passed is named in one line.
import { expect, test } from "bun:test"
import type { Event } from "../../src/opencode/client"
import {
  addStep,
  closeSegment,
  openSegment,
  overCap,
  seedSegment,
  settleSegment,
  spendingOf,
  SpendingSchema,
  tokenTotal,
  totalOf,
  type Spending,
} from "../../src/engine/records/usage"

const stepFinish = (
  id: string,
  tokens: { input: number; output: number; reasoning?: number; read?: number; write?: number },
  cost = 0,
  sessionID = "ses_1",
) =>
  ({
    type: "message.part.updated",
    properties: {
      part: {
        id,
        sessionID,
        messageID: "msg_1",
        type: "step-finish",
        reason: "tool-calls",
        cost,
        tokens: {
          input: tokens.input,
          output: tokens.output,
          reasoning: tokens.reasoning ?? 0,
          cache: { read: tokens.read ?? 0, write: tokens.write ?? 0 },
        },
      },
    },
  }) as unknown as Event

const textPart = {
  type: "message.part.updated",
  properties: { part: { id: "prt_t", sessionID: "ses_1", messageID: "msg_1", type: "text", text: "hello" } },
} as unknown as Event
const fresh = (): Spending => spendingOf({})
const tokens = (input: number, output = 0) => ({ input, output, reasoning: 0, cacheRead: 0, cacheWrite: 0 })

test("every kind of token of a finished step counts, each step once, and nothing else (or another session) counts", () => {
  const spending = fresh()
  openSegment(spending, "ses_1")
  expect(
    addStep(spending, stepFinish("prt_1", { input: 1000, output: 200, reasoning: 50, read: 400, write: 10 }, 0.01)),
  ).toBe(true)
  expect(
    addStep(spending, stepFinish("prt_1", { input: 1000, output: 200, reasoning: 50, read: 400, write: 10 }, 0.01)),
  ).toBe(false)
  expect(addStep(spending, textPart)).toBe(false)
  expect(addStep(spending, stepFinish("prt_x", { input: 9999, output: 9 }, 1, "ses_other"))).toBe(false)
  addStep(spending, stepFinish("prt_2", { input: 1500, output: 100 }, 0.02))
  expect(tokenTotal(totalOf(spending).tokens)).toBe(1660 + 1600)
  expect(totalOf(spending).cost).toBeCloseTo(0.03)
})

test("attempts in several sessions add up: a lost one counted from its events, the next from its transcript", () => {
  const spending = fresh()
  openSegment(spending, "ses_1")
  addStep(spending, stepFinish("prt_1", { input: 3000, output: 10 }))
  // The server died: no transcript for ses_1.
  settleSegment(spending, "ses_1", undefined)
  openSegment(spending, "ses_2")
  addStep(spending, stepFinish("prt_2", { input: 2000, output: 10 }))
  settleSegment(spending, "ses_2", { tokens: tokens(3000, 10), cost: 0 })
  expect(spending.open).toBeUndefined()
  expect(spending.spent.tokens).toEqual(tokens(6000, 20))
})

test("a takeover adds the steps finished while nobody followed, never one the previous process counted", () => {
  const spending = fresh()
  openSegment(spending, "ses_1", "msg_before")
  addStep(spending, stepFinish("prt_1", { input: 1000, output: 10 }))
  const saved = SpendingSchema.parse(JSON.parse(JSON.stringify(spending)))
  seedSegment(saved, [
    { id: "prt_1", tokens: tokens(1000, 10), cost: 0 },
    { id: "prt_2", tokens: tokens(1200, 10), cost: 0 },
  ])
  addStep(saved, stepFinish("prt_2", { input: 1200, output: 10 }))
  addStep(saved, stepFinish("prt_3", { input: 1400, output: 10 }))
  expect(saved.open?.after).toBe("msg_before")
  expect(tokenTotal(totalOf(saved).tokens)).toBe(3600 + 30)
})

test("closing keeps the larger of transcript and events; a session never opened is counted from its transcript", () => {
  const spending = fresh()
  openSegment(spending, "ses_1")
  addStep(spending, stepFinish("prt_1", { input: 500, output: 5 }))
  closeSegment(spending, { tokens: tokens(400, 50), cost: 0.5 })
  expect(spending.spent).toEqual({ tokens: tokens(500, 50), cost: 0.5 })
  settleSegment(spending, "ses_found_by_title", { tokens: tokens(100), cost: 0 })
  expect(spending.spent.tokens.input).toBe(600)
})

test("a record from before the running total starts from its result's tokens and cost, numbers only", () => {
  const record = { result: { tokens: tokens(700, 7), cost: 0.2 } }
  expect(spendingOf(record).spent).toEqual({ tokens: tokens(700, 7), cost: 0.2 })
  const garbled = { result: JSON.parse('{"tokens": {"input": "9", "output": -1, "reasoning": null}, "cost": "0.5"}') }
  expect(SpendingSchema.safeParse(spendingOf(garbled)).success).toBe(true)
  expect(spendingOf(garbled).spent).toEqual({ tokens: tokens(0), cost: 0 })
  expect(spendingOf({}).spent).toEqual({ tokens: tokens(0), cost: 0 })
})

test("the schema refuses garbage counts, so a bad record is set aside rather than summed", () => {
  for (const bad of [
    { spent: { tokens: tokens(-1), cost: 0 } },
    { spent: { tokens: { ...tokens(1), input: "9" }, cost: 0 } },
    { spent: { tokens: tokens(1), cost: null } },
    { open: {} },
  ])
    expect(SpendingSchema.safeParse(bad).success).toBe(false)
})

test("overCap names the cap passed; within every cap (or with none) it is quiet", () => {
  const spent = { tokens: tokens(41_000, 230), cost: 0.12 }
  expect(overCap(spent, { tokens: 40_000 })).toBe(
    "the task used 41,230 tokens, past its cap of 40,000 (maxTokensPerTask)",
  )
  expect(overCap(spent, { cost: 0.1 })).toBe("the task cost 0.1200, past its cap of 0.1 (maxCostPerTask)")
  expect(overCap(spent, { tokens: 41_230, cost: 0.12 })).toBeUndefined()
  expect(overCap(spent, {})).toBeUndefined()
})
