// Worktree lanes as a budget, on the real OpenCode with the scripted model: the lanes' true disk use
// is reported (not the diffs' size); past config maxWorktreeLanes an isolated worker is refused before
// any session, naming the oldest waiting patches, and works again once one is discarded; a claim that
// cannot be read, or names a missing or unreadable patch record, is reclaimed and reported once its
// owner is provably gone, and kept while a readable record or an unfinished task holds its lane.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { randomBytes } from "node:crypto"
import { mkdir, readdir, writeFile } from "node:fs/promises"
import type { DoctorContext } from "../../src/doctor/check"
import { lanes } from "../../src/doctor/lanes"
import { createRepository } from "../../src/model/demo"
import { spawn } from "../../src/util/process"
import { connect, startWorld, stopWorld, structured, text, type Connected, type World } from "../mcp/_setup"
import { claimJson } from "../helpers/records"

let world: World
let mcp: Connected

beforeAll(async () => {
  world = await startWorld(
    {
      edit: {
        turns: [
          {
            steps: [
              { tool: "write", args: { filePath: "note.txt", content: "a small edit\n" } },
              { text: "Wrote note.txt." },
            ],
          },
        ],
      },
      slow: {
        turns: [
          {
            steps: [
              { tool: "glob", args: { pattern: "*.txt" } },
              { text: "too late", delayMs: 120_000 },
            ],
          },
        ],
      },
    },
    { maxWorktreeLanes: 2 },
  )
  mcp = await connect(world, { syncBudgetMs: 3000 })
}, 120_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

const call = async (name: string, args: Record<string, unknown>) => mcp.client.callTool({ name, arguments: args })
const paths = () => world.home.paths
const lanesDir = () => `${paths().patchesDir}/lanes`
const taskCount = async () => (await readdir(paths().tasksDir)).filter((name) => name.endsWith(".json")).length

interface Patch {
  patch_id: string
  bytes: number
  disk_bytes: number
}
interface Reclaimed {
  lane: string
  reason: string
}

/** A repository whose snapshot weighs 1 MB (random bytes: git cannot pack them smaller). */
async function bigRepo(): Promise<string> {
  const dir = await createRepository("oc-orch-lanes-", {
    "README.md": "# lanes\n",
    "data.bin": randomBytes(1024 * 1024).toString("base64"),
  })
  world.dirs.push(dir)
  return dir
}

async function isolated(cwd: string, script: string) {
  return call("worker", { cwd, task: `Work. [script:${script}]`, isolation: "worktree" })
}

/** An isolated worker run to its end (the call returns "running" after the sync budget; a cold instance takes longer). */
async function done(cwd: string, script = "edit") {
  let out = structured(await isolated(cwd, script))
  while (out.status === "running") {
    await Bun.sleep(500)
    out = structured(await call("task_result", { task_id: out.task_id }))
  }
  return out
}

async function deadPid(): Promise<number> {
  const gone = spawn(["true"])
  await gone.exited
  return gone.pid
}

async function discardAll() {
  const listed = structured(await call("task_list", {}))
  for (const patch of (listed.patches ?? []) as Patch[])
    expect((await call("patch_discard", { patch_id: patch.patch_id })).isError).toBeFalsy()
}

test("past maxWorktreeLanes an isolated worker is refused before any session, naming the oldest waiting patches; disk use is reported truthfully; below the bound it works (control)", async () => {
  const cwd = await bigRepo()
  const first = await done(cwd)
  const second = await done(cwd)
  expect([first.status, second.status]).toEqual(["succeeded", "succeeded"])
  const [one, two] = [first.patch as Patch, second.patch as Patch]
  // The diff is a few hundred bytes; the worktree holds the 1.3 MB snapshot twice over (tree and pack).
  expect(one.bytes).toBeLessThan(4096)
  expect(one.disk_bytes).toBeGreaterThan(2 * 1024 * 1024)

  const tasks = await taskCount()
  const requests = world.model.stepRequests().length
  const refused = await isolated(cwd, "edit")
  expect(refused.isError).toBe(true)
  const said = text(refused)
  expect(said).toContain("All 2 worktree lanes (config maxWorktreeLanes) are held")
  expect(said).not.toContain("internal error")
  const next = said.slice(said.indexOf("next:"))
  expect(next.indexOf(one.patch_id)).toBeGreaterThan(0)
  // Oldest first: the first worker's patch is named before the second's.
  expect(next.indexOf(one.patch_id)).toBeLessThan(next.indexOf(two.patch_id))
  // Refused before any record or session.
  expect(await taskCount()).toBe(tasks)
  expect(world.model.stepRequests().length).toBe(requests)

  const listed = structured(await call("task_list", {}))
  const state = listed.lanes as { claimed: number; max: number; disk_bytes: number }
  expect(state).toMatchObject({ claimed: 2, max: 2 })
  expect(state.disk_bytes).toBeGreaterThan(4 * 1024 * 1024)
  expect(((listed.patches ?? []) as Patch[]).every((patch) => patch.disk_bytes > 2 * 1024 * 1024)).toBe(true)
  expect(text(await call("task_list", {}))).toMatch(/worktrees: 2 of 2 lanes held, [0-9.]+ MB on disk/)
  const [doctor] = await lanes({ paths: paths(), config: { maxWorktreeLanes: 2 } } as unknown as DoctorContext)
  expect(doctor).toMatchObject({ status: "fail" })
  expect(doctor!.detail).toContain("2 of 2 lanes held")

  // Control: one discarded, the next isolated worker runs again, in the lane it freed.
  expect((await call("patch_discard", { patch_id: one.patch_id })).isError).toBeFalsy()
  const again = await done(cwd)
  expect(again.status).toBe("succeeded")
  const record = JSON.parse(await Bun.file(`${paths().tasksDir}/${again.task_id}.json`).text()) as { workspace: string }
  expect(record.workspace).toBe(`${paths().worktreesDir}/lane-1/tree`)
  await discardAll()
}, 120_000)

test("a garbage claim and a claim naming an unreadable patch record, their owners gone, are reclaimed and reported once", async () => {
  const cwd = await bigRepo()
  await mkdir(lanesDir(), { recursive: true })
  const since = new Date().toISOString()
  await writeFile(`${lanesDir()}/lane-1.json`, "\u0000 not a claim")
  await writeFile(
    `${lanesDir()}/lane-2.json`,
    JSON.stringify({ patchId: "patch_zz_0badf00d", ownerPid: await deadPid(), ownerStart: "gone", since }),
  )
  await writeFile(`${paths().patchesDir}/patch_zz_0badf00d.json`, "{ torn record")
  // Without the reclaim both lanes stay claimed and this worker is refused.
  const worker = await done(cwd)
  expect(worker.status).toBe("succeeded")
  const listed = structured(await call("task_list", {}))
  const reclaimed = (listed.reclaimed_lanes ?? []) as Reclaimed[]
  expect(reclaimed.map((entry) => entry.lane).sort()).toEqual(["lane-1", "lane-2"])
  expect(reclaimed.find((entry) => entry.lane === "lane-1")?.reason).toContain("its claim cannot be read")
  // The torn record is set aside by whichever read meets it first (the patch store's schema check, or the audit).
  expect(reclaimed.find((entry) => entry.lane === "lane-2")?.reason).toMatch(
    /patch_zz_0badf00d('s record cannot be read| has no record)/,
  )
  expect(text(await call("task_list", {}))).not.toContain("reclaimed worktree")
  expect(structured(await call("task_list", {})).reclaimed_lanes).toBeUndefined()
  // The unreadable record is the patch store's to report: the reclaim never removes it, the store sets it aside whole.
  const record = `${paths().patchesDir}/patch_zz_0badf00d.json`
  const kept = (await Bun.file(record).exists()) ? record : `${record}.corrupt`
  expect(await Bun.file(kept).text()).toBe("{ torn record")
  await discardAll()
}, 120_000)

test("a damaged claim is kept while a readable patch record or an unfinished task holds its lane (control); reclaimed once the task ends", async () => {
  const cwd = await bigRepo()
  const waiting = await done(cwd)
  expect(waiting.status).toBe("succeeded")
  const patch = waiting.patch as Patch & { digest: string }
  const running = structured(await isolated(cwd, "slow"))
  expect(running.status).toBe("running")
  const claims = Object.fromEntries(
    await Promise.all(
      ["lane-1", "lane-2"].map(
        async (lane) =>
          [lane, claimJson(await Bun.file(`${lanesDir()}/${lane}.json`).text()) as { patchId: string }] as const,
      ),
    ),
  )
  const waitingLane = claims["lane-1"]!.patchId === patch.patch_id ? "lane-1" : "lane-2"
  const runningLane = waitingLane === "lane-1" ? "lane-2" : "lane-1"
  const runningPatch = claims[runningLane]!.patchId
  // The waiting patch's claim is garbage; the running worker's claim names a dead owner and its record is garbage.
  await writeFile(`${lanesDir()}/${waitingLane}.json`, "{ torn")
  await writeFile(
    `${lanesDir()}/${runningLane}.json`,
    JSON.stringify({ ...claims[runningLane], ownerPid: await deadPid(), ownerStart: "gone" }),
  )
  await writeFile(`${paths().patchesDir}/${runningPatch}.json`, "\u0000 torn record")

  const refused = await isolated(cwd, "edit")
  expect(refused.isError).toBe(true)
  expect(text(refused)).toContain("All 2 worktree lanes")
  const listed = structured(await call("task_list", {}))
  expect(listed.reclaimed_lanes).toBeUndefined()
  expect(listed.lanes).toMatchObject({ claimed: 2 })
  // The waiting patch is whole: it still applies.
  expect(structured(await call("patch_show", { patch_id: patch.patch_id })).digest).toBe(patch.digest)

  // Its task ended: nothing holds the running worker's lane any more.
  await call("task_cancel", { task_id: running.task_id })
  const after = (structured(await call("task_list", {})).reclaimed_lanes ?? []) as Reclaimed[]
  expect(after.map((entry) => entry.lane)).toEqual([runningLane])
  expect((await done(cwd)).status).toBe("succeeded")
  await discardAll()
}, 120_000)

test("a fan-out asking for more isolated workers than there are lanes: the members beyond are not started, each with the next step; the others run", async () => {
  const cwd = await bigRepo()
  const briefs = [0, 1, 2].map(() => ({ role: "worker", cwd, task: "Work. [script:edit]" }))
  let group = structured(await call("delegate_parallel", { briefs })) as {
    group_id?: string
    status: string
    tasks: Array<{ status: string; error?: string }>
  }
  // The member not started is in the answer that started the group (the group lists the started ones).
  const refused = group.tasks.filter((task) => task.status === "failed")
  expect(refused.length).toBe(1)
  expect(refused[0]!.error).toContain("Not started: All 2 worktree lanes (config maxWorktreeLanes) are held")
  expect(refused[0]!.error).not.toContain("internal error")
  expect(refused[0]!.error).toContain("→")
  for (let i = 0; i < 120 && group.status !== "finished"; i++) {
    await Bun.sleep(500)
    group = structured(await call("delegate_parallel", { group_id: group.group_id })) as typeof group
  }
  // Followed by group_id, the group lists the two started; an answer that finished at once lists all three.
  expect(group.tasks.map((task) => task.status).filter((status) => status !== "failed")).toEqual([
    "succeeded",
    "succeeded",
  ])
  await discardAll()
}, 120_000)
