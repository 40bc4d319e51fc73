// A concurrency slot or queue ticket naming a live process that is not following its task (an
// unrelated process, with its real start time) does not hold: a cap-1 fan-out runs past it. A real
// member's slot holds (control), and without the task check the planted slot does hold (control).
// On the real OpenCode with the scripted model.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { mkdir, readdir, writeFile } from "node:fs/promises"
import { Slots } from "../../src/engine/capacity/slots"
import { processStart, spawn, type Spawned } from "../../src/util/process"
import { connect, makeRepo, startWorld, stopWorld, structured, type Connected, type World } from "../mcp/_setup"

let world: World
let mcp: Connected
let stranger: Spawned
/** Run at the end of a case: tasks it left running. */
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  world = await startWorld(
    {
      quick: { turns: [{ steps: [{ text: "quick report" }] }] },
      slow: { turns: [{ steps: [{ text: "too late", delayMs: 120_000 }] }] },
    },
    { maxParallel: 1 },
  )
  mcp = await connect(world, { syncBudgetMs: 20_000 })
  stranger = spawn(["sleep", "600"])
}, 120_000)
afterAll(async () => {
  await stranger?.kill()
  await mcp?.close()
  await stopWorld(world)
})

const call = async (name: string, args: Record<string, unknown>) => mcp.client.callTool({ name, arguments: args })
const slots = () => world.home.paths.slotsDir

interface Group {
  group_id: string
  status: string
  tasks: Array<{ task_id: string; status: string; report: string }>
}

/** A slot and an older ticket for `taskID`, held by the stranger: alive, its start time real, not ours. */
async function plant(taskID: string, cwd: string) {
  await mkdir(`${slots()}/queue`, { recursive: true })
  const now = new Date().toISOString()
  const holder = { taskID, ownerPid: stranger.pid, ownerStart: processStart(stranger.pid), since: now }
  await writeFile(`${slots()}/slot-0.json`, JSON.stringify({ ...holder, workspace: cwd, touched: now }))
  await writeFile(`${slots()}/queue/000000000000001-${taskID}.json`, JSON.stringify(holder))
}

test.each([
  ["a task that does not exist", async () => "task_zzzzzzzz_00000001"],
  [
    "a finished task",
    async () => {
      const cwd = await makeRepo(world)
      const done = structured(await call("scout", { cwd, task: "[script:quick] look" }))
      expect(done.status).toBe("succeeded")
      return String(done.task_id)
    },
  ],
  [
    "a running task another process follows",
    async () => {
      // A plain scout holds no slot; its record names this process as its follower, not the stranger.
      const cwd = await makeRepo(world)
      const { client, close } = await connect(world, { syncBudgetMs: 1000 })
      const running = structured(
        await client.callTool({ name: "scout", arguments: { cwd, task: "[script:slow] look" } }),
      )
      expect(running.status).toBe("running")
      cleanups.push(async () => {
        await client.callTool({ name: "task_cancel", arguments: { task_id: running.task_id } })
        await close()
      })
      return String(running.task_id)
    },
  ],
])(
  "a slot and ticket naming a live unrelated process and %s do not hold: a cap-1 fan-out runs",
  async (_, taskOf) => {
    const cwd = await makeRepo(world)
    await plant(await taskOf(), cwd)
    // Control, the unprotected path: a slot check that trusts any live process holds the planted slot.
    expect(await new Slots(slots(), async () => 1).held(1)).toBe(1)
    let group = structured(
      await call("delegate_parallel", { briefs: [{ role: "scout", cwd, task: "Look. [script:quick]" }] }),
    ) as unknown as Group
    // On a loaded machine the scout may outlast a call's sync budget: the group is followed, a few calls at
    // most (a slot that held would keep it queued through all of them).
    for (let follows = 0; group.status === "running" && follows < 3; follows++)
      group = structured(await call("delegate_parallel", { group_id: group.group_id })) as unknown as Group
    expect(group.status).toBe("finished")
    expect(group.tasks.map((task) => task.status)).toEqual(["succeeded"])
    expect((await readdir(`${slots()}/queue`)).filter((name) => name.endsWith(".json"))).toEqual([])
    for (const cleanup of cleanups.splice(0)) await cleanup()
  },
  120_000,
)

test("control: a real member's slot holds; the next cap-1 fan-out waits for it and runs once it is freed", async () => {
  const cwd = await makeRepo(world)
  const { client, close } = await connect(world, { syncBudgetMs: 1000 })
  try {
    const first = structured(
      await client.callTool({
        name: "delegate_parallel",
        arguments: { briefs: [{ role: "scout", cwd, task: "Look slowly. [script:slow]" }] },
      }),
    ) as unknown as Group
    expect(first.status).toBe("running")
    // Until the slow member has its session it may still be queued itself; wait until it runs.
    for (
      let i = 0;
      i < 100 &&
      !world.model.stepRequests().some((request) => request.play.kind === "step" && request.play.script === "slow");
      i++
    )
      await Bun.sleep(200)
    const second = structured(
      await client.callTool({
        name: "delegate_parallel",
        arguments: { briefs: [{ role: "scout", cwd, task: "Look. [script:quick]" }] },
      }),
    ) as unknown as Group
    await Bun.sleep(2000)
    const waiting = structured(
      await client.callTool({ name: "delegate_parallel", arguments: { group_id: second.group_id } }),
    ) as unknown as Group
    expect(waiting.status).toBe("running")
    expect(waiting.tasks[0]!.report).toMatch(/^queued \(\d+ ahead\)$/)
    await client.callTool({ name: "delegate_parallel", arguments: { group_id: first.group_id, cancel: true } })
    let after = waiting
    for (let i = 0; i < 60 && after.status !== "finished"; i++) {
      await Bun.sleep(500)
      after = structured(
        await client.callTool({ name: "delegate_parallel", arguments: { group_id: second.group_id } }),
      ) as unknown as Group
    }
    expect(after.tasks.map((task) => task.status)).toEqual(["succeeded"])
  } finally {
    await close()
  }
}, 120_000)
