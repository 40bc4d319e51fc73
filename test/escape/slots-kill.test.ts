// The machine-wide fan-out cap counts sessions, not processes. A compiled `serve` running
// delegate_parallel (maxParallel 2) on slow scripted steps is SIGKILLed while two of its sessions work
// on the shared OpenCode server; a second `serve` starts another fan-out at once. The shared server's
// busy sessions (session.status) are sampled throughout: never more than 2. Before, the dead process's
// slots were taken back at once and four sessions ran. Controls: the sampler sees three sessions when
// nothing caps them (plain scout calls), and the cap holds without the kill; every fan-out completes,
// so the slots come back once the old sessions end.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { createRepository } from "../../src/model/demo"
import type { IsolatedHome } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import { alive } from "../../src/util/process"
import { connectStdio, type Connected } from "../helpers/mcp"
import { startHome, stopHome, type HomeWorld } from "../helpers/world"
import { until } from "../helpers/until"
import { taskRecords } from "../helpers/records"
import { busySampler } from "../helpers/busy"
import { watchdogOf } from "../helpers/leftovers"

const STEP_MS = 2500
let world: HomeWorld
let home: IsolatedHome

/** A scout whose two model answers take STEP_MS each: a session busy for about 5 s. */
const slow: ScriptInput = {
  turns: [
    {
      steps: [
        { tool: "glob", args: { pattern: "*.md" }, delayMs: STEP_MS },
        { text: "slow report", delayMs: STEP_MS },
      ],
    },
  ],
}

beforeAll(async () => {
  world = await startHome({ slow }, { config: { maxParallel: 2 } })
  home = world.home
})

afterAll(async () => {
  await stopHome(world)
})

const serve = () => connectStdio({ ...home.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" })

const records = () => taskRecords(home.paths.tasksDir)

/** Samples how many sessions the shared server lists as working in `directory`, every 50 ms, until stopped. */
function sampler(directory: string) {
  const sampled = busySampler(home.paths, async () => [directory])
  return { busiest: sampled.total, stop: async () => (await sampled.stop()).total }
}

async function repo(): Promise<string> {
  const dir = await createRepository("oc-orch-slotkill-", { "README.md": "# r\n" })
  world.dirs.push(dir)
  return dir
}

/** Every brief distinct, so the scripted model never takes two conversations for one. */
let briefs = 0
const fanOut = (mcp: Connected, cwd: string, count: number) => {
  const members = Array.from({ length: count }, () => ({
    role: "scout",
    cwd,
    task: `Look slowly, number ${++briefs}. [script:slow]`,
  }))
  return mcp.client.callTool(
    { name: "delegate_parallel", arguments: { briefs: members } },
    {
      timeout: 600_000,
    },
  )
}

const settled = (ids: string[]) => async () =>
  (await records()).filter((r) => ids.includes(r.id)).every((r) => r.status !== "running")

/** A fan-out of 3 in a serve SIGKILLed while 2 sessions work, then a fan-out of 2 in a second serve; the most busy at once. */
async function killDuringFanOut(killWatchdog: boolean) {
  const cwd = await repo()
  const before = new Set((await records()).map((r) => r.id))
  const first = await serve()
  let second: Connected | undefined
  const sampled = sampler(cwd)
  try {
    await fanOut(first, cwd, 3)
    expect(await until(() => sampled.busiest() >= 2, 30_000)).toBe(true)
    const watchdog = await watchdogOf(first.pid)
    process.kill(first.pid, "SIGKILL")
    if (killWatchdog && watchdog) process.kill(watchdog, "SIGKILL")
    expect(await until(() => !alive(first.pid) && !(killWatchdog && watchdog && alive(watchdog)), 10_000)).toBe(true)
    const dead = (await records()).filter((r) => !before.has(r.id))
    expect(dead.length).toBe(3)
    // With the watchdog alive, it takes the three over before the next serve looks (one owner at a time).
    if (!killWatchdog)
      expect(
        await until(
          async () => (await records()).filter((r) => !before.has(r.id)).every((r) => r.ownerPid !== first.pid),
          15_000,
        ),
      ).toBe(true)
    second = await serve()
    await fanOut(second, cwd, 2)
    const ids = (await records()).filter((r) => !before.has(r.id)).map((r) => r.id)
    expect(ids.length).toBe(5)
    expect(await until(settled(ids), 120_000)).toBe(true)
    const ended = (await records()).filter((r) => ids.includes(r.id))
    return { most: await sampled.stop(), ended }
  } finally {
    await sampled.stop()
    await first.close().catch(() => undefined)
    await second?.close()
  }
}

test("control: three scouts started without a fan-out run at once, and the sampler sees all three busy", async () => {
  const cwd = await repo()
  const mcp = await serve()
  const sampled = sampler(cwd)
  try {
    const before = new Set((await records()).map((r) => r.id))
    for (let i = 0; i < 3; i++)
      await mcp.client.callTool({
        name: "scout",
        arguments: { cwd, task: `Look slowly, number ${++briefs}. [script:slow]` },
      })
    expect(await until(() => sampled.busiest() >= 3, 30_000)).toBe(true)
    const ids = (await records()).filter((r) => !before.has(r.id)).map((r) => r.id)
    expect(await until(settled(ids), 60_000)).toBe(true)
  } finally {
    expect(await sampled.stop()).toBe(3)
    await mcp.close()
  }
}, 90_000)

test("control: without a kill, two serves' fan-outs (3 + 2) never run more than 2 sessions, and all finish", async () => {
  const cwd = await repo()
  const before = new Set((await records()).map((r) => r.id))
  const [one, two] = await Promise.all([serve(), serve()])
  const sampled = sampler(cwd)
  try {
    await Promise.all([fanOut(one, cwd, 3), fanOut(two, cwd, 2)])
    const ids = (await records()).filter((r) => !before.has(r.id)).map((r) => r.id)
    expect(ids.length).toBe(5)
    expect(await until(settled(ids), 120_000)).toBe(true)
    expect((await records()).filter((r) => ids.includes(r.id)).map((r) => r.status)).toEqual(Array(5).fill("succeeded"))
  } finally {
    expect(await sampled.stop()).toBe(2)
    await one.close()
    await two.close()
  }
}, 150_000)

test("attack: the fan-out's serve is SIGKILLed while its sessions run; its watchdog keeps their slots; a new fan-out waits", async () => {
  const { most, ended } = await killDuringFanOut(false)
  expect(most).toBe(2)
  expect(ended.map((r) => r.status)).toEqual(Array(5).fill("succeeded"))
  expect(ended.map((r) => r.result?.report)).toEqual(Array(5).fill("slow report"))
}, 180_000)

test("attack: the serve and its watchdog are both SIGKILLed; the next serve adopts the slots of the sessions still running", async () => {
  const { most, ended } = await killDuringFanOut(true)
  expect(most).toBe(2)
  // The two sessions that ran on are followed to their reports; the member still queued is run in a slot.
  expect(ended.map((r) => r.status)).toEqual(Array(5).fill("succeeded"))
}, 180_000)
