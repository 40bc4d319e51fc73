// Guarantees the code made before any test proved them, each on the real OpenCode with the scripted
// model: the `preserved` writer state, the one follow-up for an empty final answer, the models tool,
// and task_cancel killing a sandbox command that is running at that moment.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { readdir, rm } from "node:fs/promises"
import { readServerRecord } from "../../src/opencode/server"
import { connect as connectOpencode } from "../../src/opencode/client"
import { run } from "../../src/util/process"
import { connect, makeRepo, startWorld, stopWorld, structured, text, type Connected, type World } from "../mcp/_setup"

/**
 * A sleep length no other process uses, so looking for survivors finds only this test's; an hour, so a
 * cancel's answer can only have come from the kill.
 */
const MARKER = `3600.${process.pid}`

let world: World
let mcp: Connected

beforeAll(async () => {
  world = await startWorld({
    quick: { turns: [{ steps: [{ text: "quick report" }] }] },
    empty_then_report: {
      turns: [
        { steps: [{ tool: "read", args: { filePath: "README.md" } }, { text: "" }] },
        { steps: [{ text: "the report, after one nudge" }] },
      ],
    },
    empty_twice: { turns: [{ steps: [{ text: "" }] }, { steps: [{ text: "" }] }] },
    long_command: {
      turns: [
        {
          steps: [
            { tool: "sandbox_shell", args: { command: `(sleep ${MARKER} &); sleep ${MARKER}` } },
            { text: "not reached" },
          ],
        },
      ],
    },
  })
  mcp = await connect(world)
}, 120_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

const call = (client: Connected, name: string, args: Record<string, unknown>) =>
  client.client.callTool({ name, arguments: args }, { timeout: 120_000 })

test("preserved: with OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS=1 a writer's session is kept and the workspace held until a restart", async () => {
  const preserving = await connect(world, { preserveSessions: true }, "preserving")
  const repo = await makeRepo(world)
  try {
    const first = structured(await call(preserving, "worker", { cwd: repo, task: "[script:quick] edit" }))
    expect(first.status).toBe("succeeded")
    expect(String(first.transcript)).toMatch(/^preserved session ses_/)
    const sessionID = String(first.session_id)
    // The session is still there to export.
    const record = (await readServerRecord(world.home.paths))!
    expect(
      (
        await connectOpencode(record, { standIns: world.home.paths.opencodeDirsDir }).session.get({
          sessionID,
          directory: repo,
        })
      ).data?.id,
    ).toBe(sessionID)
    const locks = (await readdir(world.home.paths.locksDir)).filter((name) => name.endsWith(".json"))
    expect(locks.length).toBe(1)
    expect(JSON.parse(await Bun.file(`${world.home.paths.locksDir}/${locks[0]}`).text()).state).toBe("preserved")
    const second = await call(preserving, "worker", { cwd: repo, task: "[script:quick] edit again" })
    expect(text(second)).toContain("writer state preserved")
    expect(text(second)).toContain("Session preservation is on")
    // Control: a read-only scout is not held.
    expect(structured(await call(preserving, "scout", { cwd: repo, task: "[script:quick] look" })).status).toBe(
      "succeeded",
    )
    await rm(`${world.home.paths.locksDir}/${locks[0]}`)
  } finally {
    await preserving.close()
  }
})

test("an empty final answer gets one follow-up asking for the report", async () => {
  const repo = await makeRepo(world)
  const before = world.model.stepRequests().length
  const result = structured(await call(mcp, "scout", { cwd: repo, task: "[script:empty_then_report] look" }))
  expect(result.status).toBe("succeeded")
  expect(result.report).toBe("the report, after one nudge")
  const requests = world.model.stepRequests().slice(before)
  expect(
    requests.filter((r) => JSON.stringify(r).includes("did not contain the report")).length,
  ).toBeGreaterThanOrEqual(1)
  // Control: a model that stays empty is asked once, not again and again, and the task says so.
  const twice = structured(await call(mcp, "scout", { cwd: repo, task: "[script:empty_twice] look" }))
  expect(twice.status).toBe("needs_review")
  expect(String(twice.next)).toContain("without a usable report")
})

test("the models tool lists what OpenCode offers and each role's route", async () => {
  const result = structured(await call(mcp, "models", {}))
  const ids = (result.models as { id: string }[]).map((m) => m.id)
  expect(ids).toContain("scripted/fast")
  expect(ids).toContain("scripted/second")
  expect((result.roles as Record<string, { model?: string }>).scout?.model).toBe("scripted/fast")
  expect(
    (structured(await call(mcp, "models", { filter: "second" })).models as { id: string }[]).map((m) => m.id),
  ).toEqual(["scripted/second"])
})

test("task_cancel kills the sandbox command running at that moment, with what it started", async () => {
  const repo = await makeRepo(world)
  const survivors = async () => (await run(["pgrep", "-f", `sleep ${MARKER}`])).stdout.trim()
  const started = await connect(world, { syncBudgetMs: 1000 }, "cancelling")
  try {
    const running = structured(await call(started, "worker", { cwd: repo, task: "[script:long_command] wait" }))
    expect(running.status).toBe("running")
    const deadline = Date.now() + 20_000
    while (!(await survivors()) && Date.now() < deadline) await Bun.sleep(100)
    // Control: the command (and its background child) really runs before the cancel.
    expect((await survivors()).split("\n").length).toBeGreaterThanOrEqual(2)
    const cancelled = structured(await call(started, "task_cancel", { task_id: running.task_id }))
    expect(cancelled.status).toBe("cancelled")
    const gone = Date.now() + 5000
    while ((await survivors()) && Date.now() < gone) await Bun.sleep(100)
    expect(await survivors()).toBe("")
  } finally {
    await started.close()
  }
})
