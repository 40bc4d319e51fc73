// A scout's or worker's per-call options on the real OpenCode: timeout_seconds (within the role's
// budget, refused before anything starts when over it) and the session's title (lane label, role, brief).
import { afterAll, beforeAll, expect, test } from "bun:test"
import { connect, makeRepo, startWorld, stopWorld, taskFiles, text, type Connected, type World } from "./_setup"
import { scoutAnswer } from "./_scout"

let world: World
let mcp: Connected

beforeAll(async () => {
  world = await startWorld({
    hang: { turns: [{ steps: [{ text: "too late", delayMs: 120_000 }] }] },
    answer: { turns: [{ steps: [{ text: "count is in src/tally.ts" }] }] },
  })
  mcp = await connect(world, { label: "lane-a" })
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
    const result = await mcp.client.callTool({
      name: role,
      arguments: { cwd: repo, task: "[script:hang] look", timeout_seconds: seconds },
    })
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
  const scout = await scoutAnswer(mcp.client, { cwd: repo, task: "[script:hang] look", timeout_seconds: 10 }, 120_000)
  expect(scout.status).toBe("timed_out")
  expect(scout.error_kind).toBe("timeout")
  expect(performance.now() - started).toBeGreaterThanOrEqual(10_000)
  expect(performance.now() - started).toBeLessThan(60_000)
}, 120_000)

/** The titles of the kept sessions in `directory`, as a person in the OpenCode TUI sees them. */
async function titlesIn(directory: string) {
  const { client } = await mcp.runtime.opencode()
  return ((await client.session.list({ directory })).data ?? []).map((session) => session.title)
}

test("a session's title carries the lane label, the role and the brief's first line, and ends with the task id", async () => {
  const repo = await makeRepo(world)
  const fromEnv = await scoutAnswer(
    mcp.client,
    { cwd: repo, task: "Where is count? [script:answer]\nsay which file" },
    60_000,
  )
  expect(fromEnv.status).toBe("succeeded")
  const fromCall = await scoutAnswer(
    mcp.client,
    { cwd: repo, task: "Who calls count? [script:answer]", label: "review" },
    60_000,
  )
  expect(fromCall.status).toBe("succeeded")
  const titles = await titlesIn(repo)
  expect(titles).toContain(`lane-a · scout · Where is count? script:answer [${fromEnv.task_id}]`)
  expect(titles).toContain(`review · scout · Who calls count? script:answer [${fromCall.task_id}]`)
}, 120_000)
