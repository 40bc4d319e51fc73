// Spending against the caps: each finished step counts once, whatever else the session emits, and the
// first cap passed is named in one line.
import { expect, test } from "bun:test"
import type { Event } from "../../src/opencode/client"
import { addStep, newUsage, overCap } from "../../src/engine/usage"

const stepFinish = (id: string, tokens: { input: number; output: number; reasoning?: number; read?: number; write?: number }, cost = 0) =>
  ({
    type: "message.part.updated",
    properties: {
      part: {
        id,
        sessionID: "ses_1",
        messageID: "msg_1",
        type: "step-finish",
        reason: "tool-calls",
        cost,
        tokens: { input: tokens.input, output: tokens.output, reasoning: tokens.reasoning ?? 0, cache: { read: tokens.read ?? 0, write: tokens.write ?? 0 } },
      },
    },
  }) as unknown as Event

const textPart = { type: "message.part.updated", properties: { part: { id: "prt_t", sessionID: "ses_1", messageID: "msg_1", type: "text", text: "hello" } } } as unknown as Event

test("every kind of token of a finished step counts, each step once, and nothing else counts", () => {
  const usage = newUsage()
  addStep(usage, stepFinish("prt_1", { input: 1000, output: 200, reasoning: 50, read: 400, write: 10 }, 0.01))
  addStep(usage, stepFinish("prt_1", { input: 1000, output: 200, reasoning: 50, read: 400, write: 10 }, 0.01))
  addStep(usage, textPart)
  addStep(usage, stepFinish("prt_2", { input: 1500, output: 100 }, 0.02))
  expect(usage.tokens).toBe(1660 + 1600)
  expect(usage.cost).toBeCloseTo(0.03)
})

test("overCap names the cap passed; within every cap (or with none) it is quiet", () => {
  const usage = { ...newUsage(), tokens: 41_230, cost: 0.12 }
  expect(overCap(usage, { tokens: 40_000 })).toBe("the task used 41,230 tokens, past its cap of 40,000 (maxTokensPerTask)")
  expect(overCap(usage, { cost: 0.1 })).toBe("the task cost 0.1200, past its cap of 0.1 (maxCostPerTask)")
  expect(overCap(usage, { tokens: 41_230, cost: 0.12 })).toBeUndefined()
  expect(overCap(usage, {})).toBeUndefined()
})
