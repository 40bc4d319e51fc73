// A scout's or worker's per-call options on the real OpenCode: timeout_seconds (within the role's
// budget, refused before anything starts when over it) and the session's title (lane label, role, brief);
// and the sync budget, counted from the call's arrival so that a slow start is spent from it.
import { afterAll, beforeAll, expect, test } from "bun:test"
import {
  connect,
  makeRepo,
  startWorld,
  stopWorld,
  structured,
  taskFiles,
  text,
  type Connected,
  type World,
} from "./_setup"
import { readFlags } from "../../src/config/flags"
import { Runtime } from "../../src/engine/capacity/runtime"
import { serveInProcess } from "../helpers/in-process"
import { until } from "../helpers/until"
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
  // The model answers after 120 s, past this test's deadline: a timed_out result came from the deadline.
  const scout = await scoutAnswer(mcp.client, { cwd: repo, task: "[script:hang] look", timeout_seconds: 10 }, 120_000)
  expect(scout.status).toBe("timed_out")
  expect(scout.error_kind).toBe("timeout")
  // The deadline was the 10 s asked for, and the task ended at it, not before.
  const record = (await Bun.file(`${world.home.paths.tasksDir}/${scout.task_id}.json`).json()) as {
    operationMs: number
    finishedAt: string
    deadline: number
  }
  expect(record.operationMs).toBe(10_000)
  // Millisecond clocks on both sides: a timer is never early by more than that.
  expect(Date.parse(record.finishedAt) >= record.deadline - 5).toBe(true)
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

/**
 * The sync budget of the calls below: long enough for a quick scout's whole call on a loaded machine (at a
 * load average of 24 on 2 cores one took 18 s, past a 15 s budget).
 */
const BUDGET_MS = 45_000

/** An in-process MCP server with that budget whose delegations' start takes longer than it when `slowStart`. */
async function budgeted(slowStart: boolean) {
  const runtime = new Runtime(
    { ...readFlags(world.home.env), syncBudgetMs: BUDGET_MS },
    {
      // The start's last read of the server returns only once the whole budget has passed since it began.
      beforeRead: async (read) => {
        if (!slowStart || read !== "catalog") return
        const spent = Date.now() + BUDGET_MS
        await until(() => Date.now() > spent, BUDGET_MS * 2)
      },
    },
  )
  const served = await serveInProcess(runtime, "budgeted")
  return {
    client: served.client,
    close: async () => {
      await served.close()
      runtime.close()
    },
  }
}

test("a start that outlasts the sync budget answers `running` with the task as soon as it has one, and the task goes on", async () => {
  const repo = await makeRepo(world)
  const slow = await budgeted(true)
  try {
    const scout = await scoutAnswer(slow.client, { cwd: repo, task: "[script:answer] where?" }, 180_000)
    expect(scout.status).toBe("running")
    const status = async () =>
      structured(
        await slow.client.callTool({ name: "task_status", arguments: { task_id: scout.task_id, wait_seconds: 5 } }),
      ).status
    expect(await until(async () => (await status()) !== "running", 60_000)).toBe(true)
    const ended = await slow.client.callTool({ name: "task_result", arguments: { task_id: scout.task_id } })
    expect(text(ended)).toContain("count is in src/tally.ts")
  } finally {
    await slow.close()
  }
}, 180_000)

test("control: with a quick start, the same call waits within its budget and answers the report", async () => {
  const repo = await makeRepo(world)
  const quick = await budgeted(false)
  try {
    const scout = await scoutAnswer(quick.client, { cwd: repo, task: "[script:answer] where?" }, 180_000)
    expect(scout.status).toBe("succeeded")
  } finally {
    await quick.close()
  }
}, 180_000)
