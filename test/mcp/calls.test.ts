// A scout's or worker's per-call options on the real OpenCode: timeout_seconds (within the role's
// budget, refused before anything starts when over it).
import { afterAll, beforeAll, expect, test } from "bun:test"
import { connect, makeRepo, startWorld, stopWorld, structured, taskFiles, text, type Connected, type World } from "./_setup"

let world: World
let mcp: Connected

beforeAll(async () => {
  world = await startWorld({ hang: { turns: [{ steps: [{ text: "too late", delayMs: 120_000 }] }] } })
  mcp = await connect(world)
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

test.each([
  ["scout", 301, "the scout budget of 300s (timeoutLimits.scout)"],
  ["worker", 601, "the worker budget of 600s (timeoutLimits.worker)"],
])(
  "a %s's timeout_seconds over its role's budget is refused before anything starts",
  async (role, seconds, words) => {
    const repo = await makeRepo(world)
    const before = await taskFiles(world)
    const result = await mcp.client.callTool({ name: role, arguments: { cwd: repo, task: "[script:hang] look", timeout_seconds: seconds } })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain(`timeout_seconds ${seconds} is over ${words}`)
    expect(text(result)).toContain(`next: Pass timeout_seconds of at most ${seconds - 1}`)
    expect(await taskFiles(world)).toEqual(before)
  },
  30_000,
)

test("a scout's small timeout_seconds times the task out at that deadline", async () => {
  const repo = await makeRepo(world)
  const started = performance.now()
  const scout = structured(await mcp.client.callTool({ name: "scout", arguments: { cwd: repo, task: "[script:hang] look", timeout_seconds: 10 } }, undefined, { timeout: 120_000 }))
  expect(scout.status).toBe("timed_out")
  expect(scout.error_kind).toBe("timeout")
  expect(performance.now() - started).toBeGreaterThanOrEqual(10_000)
  expect(performance.now() - started).toBeLessThan(60_000)
}, 120_000)
