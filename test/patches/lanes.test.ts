// Worktree lanes: each isolated worktree takes the lowest free lane, a discarded patch frees its lane
// for the next one (the same directory, so OpenCode's instance for it stays warm), and a claim left by
// a dead process with no patch behind it is taken back, while a claim whose patch still exists holds.
import { expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { lstat, mkdir, symlink, writeFile } from "node:fs/promises"
import { laneBounds, laneState, Reclaims } from "../../src/engine/capacity/lanes"
import { TaskStore } from "../../src/engine/store/task-store"
import { processStart, run, spawn } from "../../src/util/process"
import { claimedLanes, claimLane, MAX_LANES } from "../../src/workspace/worktree/lanes"
import { createWorktree, removeWorktree } from "../../src/workspace/worktree/worktree"
import { tempDir } from "../helpers/temp"
import { patchWorld } from "./_repo"

test("two worktrees at once take two lanes; a discarded one's lane is the next one's, emptied first", async () => {
  await using dir = await tempDir("oc-orch-lanes-")
  const { repo, host, paths } = await patchWorld(dir.path)
  const first = await createWorktree(repo, { host, paths })
  const second = await createWorktree(repo, { host, paths })
  expect([first.layout.dir, second.layout.dir]).toEqual([
    `${paths.worktreesDir}/lane-1`,
    `${paths.worktreesDir}/lane-2`,
  ])
  expect(await claimedLanes(paths.patchesDir)).toEqual(expect.arrayContaining(["lane-1", "lane-2"]))
  await writeFile(`${first.layout.tree}/left-by-the-first.txt`, "x")
  await removeWorktree(paths, first.record)
  expect(await claimedLanes(paths.patchesDir)).toEqual(["lane-2"])
  const third = await createWorktree(repo, { host, paths })
  expect(third.layout.tree).toBe(first.layout.tree)
  expect(existsSync(`${third.layout.tree}/left-by-the-first.txt`)).toBe(false)
  expect(existsSync(`${third.layout.tree}/README.md`)).toBe(true)
  // Removing the first patch again (a repeated discard) does not free the lane the third now holds.
  await removeWorktree(paths, first.record)
  expect(await claimedLanes(paths.patchesDir)).toEqual(expect.arrayContaining(["lane-1", "lane-2"]))
  await removeWorktree(paths, second.record)
  await removeWorktree(paths, third.record)
  expect(await claimedLanes(paths.patchesDir)).toEqual([])
}, 60_000)

test("a claim by a dead process whose patch is gone is taken back; one whose patch exists holds (control)", async () => {
  await using dir = await tempDir("oc-orch-lanes-")
  const { paths } = await patchWorld(dir.path)
  const dead = spawn(["true"])
  await dead.exited
  await mkdir(`${paths.patchesDir}/lanes`, { recursive: true })
  const claim = (patchId: string) =>
    JSON.stringify({ patchId, ownerPid: dead.pid, ownerStart: "gone", since: new Date().toISOString() })
  await writeFile(`${paths.patchesDir}/lanes/lane-1.json`, claim("patch_a_01"))
  await writeFile(`${paths.patchesDir}/lanes/lane-2.json`, claim("patch_b_02"))
  // A detail that fails its shape (the disk figure) does not cost the patch its lane.
  const record = {
    id: "patch_a_01",
    status: "ready",
    createdAt: new Date().toISOString(),
    layout: { dir: `${paths.worktreesDir}/lane-1` },
    source: { workspace: "/w" },
    disk: "lots",
  }
  await writeFile(`${paths.patchesDir}/patch_a_01.json`, JSON.stringify(record))
  const bounds = { max: MAX_LANES, inUse: async () => false }
  // lane-1's patch exists: it holds. lane-2's patch is gone and its owner dead: it is free.
  expect(await claimLane(paths.worktreesDir, paths.patchesDir, "patch_c_03", undefined, bounds)).toBe("lane-2")
  expect(await claimLane(paths.worktreesDir, paths.patchesDir, "patch_d_04", undefined, bounds)).toBe("lane-3")
})

test("a claim that is a FIFO, a link or a directory is never read through; with nothing else holding its lane it is reclaimed", async () => {
  await using dir = await tempDir("oc-orch-lanes-")
  const { paths } = await patchWorld(dir.path)
  await mkdir(`${paths.patchesDir}/lanes/lane-3.json`, { recursive: true })
  await run(["mkfifo", `${paths.patchesDir}/lanes/lane-1.json`])
  await symlink("/dev/zero", `${paths.patchesDir}/lanes/lane-2.json`)
  const bounds = { max: 4, inUse: async () => false }
  const taken = await Promise.all(
    ["patch_e_05", "patch_f_06", "patch_g_07"].map((id) =>
      claimLane(paths.worktreesDir, paths.patchesDir, id, undefined, bounds),
    ),
  )
  expect(taken.sort()).toEqual(["lane-1", "lane-2", "lane-3"])
  // Control: the same FIFO claim on a lane an unfinished task still runs in is kept.
  await run(["mkfifo", `${paths.patchesDir}/lanes/lane-9.json`])
  const busy = { max: 9, inUse: async (lane: string) => lane.endsWith("/lane-9") }
  expect(await claimLane(paths.worktreesDir, paths.patchesDir, "patch_h_08", undefined, busy)).toBe("lane-4")
  expect((await lstat(`${paths.patchesDir}/lanes/lane-9.json`)).isFIFO()).toBe(true)
})

test("a claim naming a live unrelated process (its real start time) and no patch record is reclaimed; one just taken, before its record, holds (control)", async () => {
  await using dir = await tempDir("oc-orch-lanes-")
  const { paths } = await patchWorld(dir.path)
  const stranger = spawn(["sleep", "60"])
  try {
    await mkdir(`${paths.patchesDir}/lanes`, { recursive: true })
    const claim = (patchId: string, since: Date) =>
      JSON.stringify({
        patchId,
        ownerPid: stranger.pid,
        ownerStart: processStart(stranger.pid),
        since: since.toISOString(),
      })
    const hour = 3_600_000
    await writeFile(`${paths.patchesDir}/lanes/lane-1.json`, claim("patch_i_09", new Date(Date.now() - hour)))
    await writeFile(`${paths.patchesDir}/lanes/lane-2.json`, claim("patch_j_0a", new Date(Date.now() + hour)))
    await writeFile(`${paths.patchesDir}/lanes/lane-3.json`, claim("patch_k_0b", new Date()))
    const bounds = { max: 4, inUse: async () => false }
    const taken = [
      await claimLane(paths.worktreesDir, paths.patchesDir, "patch_l_0c", undefined, bounds),
      await claimLane(paths.worktreesDir, paths.patchesDir, "patch_m_0d", undefined, bounds),
    ]
    // An hour old, and one dated an hour ahead: neither is being created. The fresh one is.
    expect(taken).toEqual(["lane-1", "lane-2"])
    expect(await claimLane(paths.worktreesDir, paths.patchesDir, "patch_n_0e", undefined, bounds)).toBe("lane-4")
  } finally {
    await stranger.kill()
  }
})

test("a reclaim is reported by the value its caller holds, once; another caller does not see it", async () => {
  await using dir = await tempDir("oc-orch-lanes-")
  const { paths } = await patchWorld(dir.path)
  const dead = spawn(["true"])
  await dead.exited
  await mkdir(`${paths.patchesDir}/lanes`, { recursive: true })
  const since = new Date().toISOString()
  await writeFile(`${paths.patchesDir}/lanes/lane-1.json`, "\u0000 not a claim")
  await writeFile(
    `${paths.patchesDir}/lanes/lane-2.json`,
    JSON.stringify({ patchId: "patch_b_02", ownerPid: dead.pid, ownerStart: "gone", since }),
  )
  // A start's claim takes lane-1 back: its caller's Reclaims hold the report, nobody else's.
  const mine = new Reclaims()
  const store = new TaskStore(paths.tasksDir)
  expect(
    await claimLane(paths.worktreesDir, paths.patchesDir, "patch_c_03", undefined, laneBounds(4, store, mine)),
  ).toBe("lane-1")
  const other = await laneState(paths, 4)
  // The other caller's audit takes lane-2 back and reports only that one.
  expect(other.reclaimed.map((entry) => entry.lane)).toEqual(["lane-2"])
  const listed = await laneState(paths, 4, mine)
  expect(listed.reclaimed.map((entry) => [entry.lane, entry.reason])).toEqual([["lane-1", "its claim cannot be read"]])
  // Once: the next listing with the same value has nothing left to report.
  expect((await laneState(paths, 4, mine)).reclaimed).toEqual([])
})
