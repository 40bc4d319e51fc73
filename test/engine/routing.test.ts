// Routing with fallback, its pure parts: config.json's list (a string still valid, a bad or empty list
// refused), which failure moves to the next route and which never does, what doctor and the start check
// say of every model in a list, how the ledger splits a task's spending by the route that spent it, and a
// ledger row or record whose fallback list is garbage (read again, or set aside), never summed.
import { describe, expect, test } from "bun:test"
import { ConfigSchema, roleModels } from "../../src/config/schema"
import { summarize } from "../../src/engine/ledger/ledger"
import { configModelReadiness } from "../../src/engine/capacity/readiness"
import { RecordSchema, type DelegationResult, type TaskRecord } from "../../src/engine/records/record-schema"
import { nextRoute, refusalOf } from "../../src/engine/turn/fallback"
import { answeredSpend, type Fallback } from "../../src/engine/records/usage"
import { classifyFailure } from "../../src/engine/turn/failure"
import { ledgerOf, ledgerRow } from "../../src/engine/ledger/index-rows"

const A = { providerID: "a", modelID: "x" }
const B = { providerID: "b", modelID: "y" }
const failure = (text: string) => classifyFailure({ status: "failed", text })

describe("config.json's models", () => {
  test("a string and an ordered list are both valid; the list keeps its order", () => {
    const config = ConfigSchema.parse({ version: 1, models: { scout: ["a/x", "b/y"], worker: "a/x" } })
    expect(roleModels(config, "scout")).toEqual(["a/x", "b/y"])
    expect(roleModels(config, "worker")).toEqual(["a/x"])
    expect(roleModels(config, "runner")).toEqual([])
  })

  test.each([
    ["an empty list", []],
    ["a list with a bad id", ["a/x", "not-a-model"]],
    ["a list of nine", Array.from({ length: 9 }, (_, i) => `p/m${i}`)],
  ])("%s is refused", (_name, scout) => {
    expect(ConfigSchema.safeParse({ version: 1, models: { scout } }).success).toBe(false)
  })
})

describe("which failure moves to the next route", () => {
  test.each([
    ["a spent quota", "You exceeded your current quota, please check your plan and billing details", "quota"],
    ["a refused key", "APIError (HTTP 401): Incorrect API key provided", "auth"],
    ["an unknown model", "The model `m` does not exist or you do not have access to it", "model_not_found"],
  ])("%s before any step moves, saying why", (_name, text, kind) => {
    const move = nextRoute({ failure: failure(text), acted: false, fallbacks: [B], current: A })
    expect(move).toMatchObject({ from: "a/x", to: B, rest: [], kind })
    expect(move?.line).toBe(`model a/x refused (${kind}): trying b/y`)
  })

  test.each([
    ["a rate limit (the same route works after a wait)", "Rate limit reached", false, [B]],
    ["a context overflow (another model would not fix the brief)", "maximum context length is 8192", false, [B]],
    ["a quota refusal after a step ran", "exceeded your current quota", true, [B]],
    ["a quota refusal with no route left", "exceeded your current quota", false, []],
  ])("%s does not move", (_name, text, acted, fallbacks) => {
    expect(nextRoute({ failure: failure(text), acted, fallbacks, current: A })).toBeUndefined()
  })

  test("a turn that did not fail does not move", () => {
    expect(nextRoute({ failure: undefined, acted: false, fallbacks: [B], current: A })).toBeUndefined()
  })

  test("OpenCode's retry messages: a refusal stops the retrying, a rate limit does not", () => {
    expect(refusalOf("You exceeded your current quota, please check your plan and billing details.")).toBe("quota")
    expect(refusalOf("Rate limit reached (scripted).")).toBeUndefined()
    expect(refusalOf("The server is overloaded, please try again later")).toBeUndefined()
  })
})

describe("doctor and the start check read every model of a list", () => {
  const catalog = [
    { id: "a/x", name: "x", variants: ["high"] },
    { id: "b/y", name: "y", variants: [] },
  ]
  test("every model offered: ready, naming the order", () => {
    const config = ConfigSchema.parse({ version: 1, models: { scout: ["a/x", "b/y"] } })
    expect(configModelReadiness("scout", config, catalog, "/c.json")).toMatchObject({
      ok: true,
      detail: "a/x (default variant), then b/y",
    })
  })
  test("a fallback OpenCode does not list fails, naming it and the key to fix", () => {
    const config = ConfigSchema.parse({ version: 1, models: { scout: ["a/x", "b/gone"] } })
    const found = configModelReadiness("scout", config, catalog, "/c.json")
    expect(found.ok).toBe(false)
    expect(found.detail).toContain('"b/gone"')
    expect(found.fix).toContain("models.scout")
  })
})

const tokens = (input: number) => ({ input, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 })
const left = (model: string, input: number, cost: number): Fallback => ({
  model,
  why: "quota: spent",
  kind: "quota",
  tokens: tokens(input),
  cost,
})

function record(model: string, input: number, cost: number, fallbackFrom?: Fallback[]): TaskRecord {
  const at = new Date().toISOString()
  const result = {
    status: "succeeded",
    role: "scout",
    report: "r",
    model,
    steps: 1,
    tokens: tokens(input),
    cost,
    durationMs: 1000,
    workspace: "/w",
    tools: [],
    commands: [],
  } satisfies DelegationResult
  return {
    ...{ version: 1, id: "task_x", role: "scout", agent: "scout", workspace: "/w", title: "t", writable: false },
    ...{ status: "succeeded", sessions: [], ownerPid: 1, createdAt: at, updatedAt: at, finishedAt: at },
    ...{ deadline: 0, operationMs: 0, turns: 1, revision: 1, progress: [], result, fallbackFrom },
  }
}

describe("the ledger counts each route", () => {
  test("a route left gets its own spending (not a success); the model that answered gets the rest", () => {
    const stats = summarize([record("b/y", 100, 0.5, [left("a/x", 10, 0.1)]), record("a/x", 7, 0.2)])
    const row = (model: string) => stats.rows.find((r) => r.model === model)!
    expect(row("b/y")).toMatchObject({ tasks: 1, succeeded: 1, tokens: tokens(90) })
    expect(row("b/y").cost).toBeCloseTo(0.4)
    expect(row("a/x")).toMatchObject({ tasks: 2, succeeded: 1, tokens: tokens(17) })
    expect(row("a/x").cost).toBeCloseTo(0.3)
    // The total counts each task once, with everything it spent.
    expect(stats.total).toMatchObject({ tasks: 2, succeeded: 2, tokens: tokens(107) })
  })

  test("what the routes left spent is never more than the task's total", () => {
    expect(answeredSpend({ tokens: tokens(5), cost: 0.1 }, [left("a/x", 9, 0.5)])).toEqual({
      tokens: tokens(0),
      cost: 0,
    })
  })

  test("a ledger row whose fallback list is garbage is not summed (it is read again from its record)", () => {
    const row = ledgerOf(record("b/y", 1, 0, [left("a/x", 1, 0)]))
    expect(ledgerRow(JSON.stringify(row))).toEqual(row)
    for (const bad of [{ model: "a/x" }, "a/x", { ...left("a/x", 1, 0), cost: -1 }])
      expect(ledgerRow(JSON.stringify({ ...row, fallbackFrom: [bad] }))).toBeUndefined()
  })

  test("a record whose fallback fields are garbage fails its schema (and is set aside)", () => {
    const good = record("b/y", 1, 0, [left("a/x", 1, 0)])
    expect(RecordSchema.safeParse({ ...good, fallbacks: [B] }).success).toBe(true)
    expect(RecordSchema.safeParse({ ...good, fallbacks: ["b/y"] }).success).toBe(false)
    expect(RecordSchema.safeParse({ ...good, fallbackFrom: [{ model: "a/x" }] }).success).toBe(false)
  })
})
