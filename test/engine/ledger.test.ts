// The savings ledger over hand-built task records: grouping by role and model, the period, success
// rate, sums and the median duration, and that unfinished tasks are left out.
import { expect, test } from "bun:test"
import { parseSince, renderStats, summarize } from "../../src/engine/ledger/ledger"
import type { DelegationResult, TaskRecord } from "../../src/engine/records/record-schema"
import type { Status } from "../../src/engine/records/status"

const NOW = Date.parse("2026-11-30T12:00:00Z")
let next = 0

function record(
  role: "scout" | "worker" | "runner",
  status: Status,
  fields: {
    model?: string
    hoursAgo?: number
    input?: number
    output?: number
    cost?: number
    ms?: number
    keptOut?: number
  },
): TaskRecord {
  const finishedAt = new Date(NOW - (fields.hoursAgo ?? 1) * 3_600_000).toISOString()
  const result: DelegationResult = {
    status,
    role,
    report: "r",
    model: fields.model,
    steps: 2,
    tokens: { input: fields.input ?? 0, output: fields.output ?? 0, reasoning: 1, cacheRead: 10, cacheWrite: 0 },
    cost: fields.cost ?? 0,
    durationMs: fields.ms ?? 1000,
    workspace: "/w",
    tools: [],
    commands: [],
    bytes: { transcript: (fields.keptOut ?? 0) + 100, logs: 0, returned: 100, keptOut: fields.keptOut ?? 0 },
  }
  const id = `task_test_${(next++).toString(16).padStart(8, "0")}`
  return {
    version: 1,
    id,
    role,
    agent: role,
    workspace: "/w",
    title: id,
    writable: role === "worker",
    status,
    sessions: [],
    ownerPid: 1,
    createdAt: finishedAt,
    updatedAt: finishedAt,
    finishedAt: status === "running" ? undefined : finishedAt,
    deadline: 0,
    operationMs: 0,
    turns: 1,
    revision: 1,
    progress: [],
    result: status === "running" ? undefined : result,
  }
}

const records = [
  record("scout", "succeeded", { model: "p/cheap", input: 100, output: 10, cost: 0.01, ms: 1000, keptOut: 5000 }),
  record("scout", "succeeded", { model: "p/cheap", input: 200, output: 20, cost: 0.02, ms: 3000, keptOut: 7000 }),
  record("scout", "failed", { model: "p/cheap", input: 50, output: 0, cost: 0.005, ms: 2000, keptOut: 0 }),
  record("scout", "succeeded", { model: "p/other", input: 1, output: 1, ms: 9000, keptOut: 1 }),
  record("worker", "timed_out", { model: "p/cheap", input: 400, output: 40, cost: 0.04, ms: 60_000, keptOut: 20_000 }),
  record("worker", "succeeded", {
    model: "p/cheap",
    input: 300,
    output: 30,
    cost: 0.03,
    ms: 20_000,
    hoursAgo: 48,
    keptOut: 9000,
  }),
  record("worker", "running", { model: "p/cheap" }),
]

test("per role and model: tasks, success rate, sums of tokens, cost and bytes kept out, median duration", () => {
  const stats = summarize(records)
  const scoutCheap = stats.rows.find((r) => r.role === "scout" && r.model === "p/cheap")!
  expect(scoutCheap).toMatchObject({ tasks: 3, succeeded: 2, steps: 6, bytesKeptOut: 12_000, medianDurationMs: 2000 })
  expect(scoutCheap.successRate).toBeCloseTo(2 / 3)
  expect(scoutCheap.tokens).toEqual({ input: 350, output: 30, reasoning: 3, cacheRead: 30, cacheWrite: 0 })
  expect(scoutCheap.cost).toBeCloseTo(0.035)
  const worker = stats.rows.find((r) => r.role === "worker")!
  // Two finished workers (the running one is not counted), median of 20 s and 60 s.
  expect(worker).toMatchObject({
    tasks: 2,
    succeeded: 1,
    successRate: 0.5,
    medianDurationMs: 40_000,
    bytesKeptOut: 29_000,
  })
  expect(stats.rows.map((r) => `${r.role} ${r.model}`)).toEqual(["scout p/cheap", "scout p/other", "worker p/cheap"])
})

test("the total is the sum of the rows, and matches the records", () => {
  const stats = summarize(records)
  const finished = records.filter((r) => r.result)
  expect(stats.total.tasks).toBe(finished.length)
  expect(stats.total.tasks).toBe(stats.rows.reduce((sum, r) => sum + r.tasks, 0))
  expect(stats.total.tokens.input).toBe(finished.reduce((sum, r) => sum + r.result!.tokens.input, 0))
  expect(stats.total.cost).toBeCloseTo(stats.rows.reduce((sum, r) => sum + r.cost, 0))
  expect(stats.total.bytesKeptOut).toBe(stats.rows.reduce((sum, r) => sum + r.bytesKeptOut, 0))
})

test("since leaves out tasks finished before the period", () => {
  const stats = summarize(records, parseSince("24h", NOW))
  expect(stats.since).toBe("2026-11-29T12:00:00.000Z")
  expect(stats.rows.find((r) => r.role === "worker")).toMatchObject({ tasks: 1, succeeded: 0 })
  expect(stats.total.tasks).toBe(5)
})

test.each([
  ["30m", NOW - 1_800_000],
  ["24h", NOW - 86_400_000],
  ["7d", NOW - 7 * 86_400_000],
  ["2w", NOW - 14 * 86_400_000],
  ["2026-11-01", Date.parse("2026-11-01")],
])("parseSince(%p)", (since, expected) => {
  expect(parseSince(since, NOW)).toBe(expected)
})

test("parseSince refuses what is neither a duration nor a date, saying what to write", () => {
  expect(() => parseSince("last week", NOW)).toThrow(/neither a duration nor a date/)
})

test("the table: a line per role and model, then the total; and a plain line when there is nothing", () => {
  const text = renderStats(summarize(records))
  const lines = text.split("\n")
  expect(lines[1]).toMatch(/^role\s+model\s+tasks\s+ok\s+tokens\s+cost\s+kept out\s+returned\s+median$/)
  expect(lines[2]).toMatch(/^scout\s+p\/cheap\s+3\s+67%/)
  expect(lines.at(-1)).toMatch(/^all\s+all\s+6\s+67%/)
  expect(renderStats(summarize([]))).toBe("No finished tasks.")
})
