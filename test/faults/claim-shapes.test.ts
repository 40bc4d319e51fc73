// The claim-like state files (a delegate_parallel slot and queue ticket, a worktree lane claim, a
// group, a writer lock, the shared server's record) read through the same schema-checked function as
// the task records: a FIFO or a symlink to /dev/zero in one's place must not block or flood the
// reader, and garbage or a wrong shape is set aside and read as absent, so the slot, the lane, the
// workspace is free again. Store-level: no OpenCode is needed to take a slot or a lane. Control: a
// valid claim of a live holder (this process) still holds.
import { afterAll, expect, test } from "bun:test"
import { existsSync, readFileSync } from "node:fs"
import { mkdir, readdir, rm, symlink, writeFile } from "node:fs/promises"
import { resolvePaths } from "../../src/config/paths"
import { readFlags } from "../../src/config/flags"
import { readGroup } from "../../src/engine/records/groups"
import { WriterLocks } from "../../src/engine/capacity/locks"
import { Slots } from "../../src/engine/capacity/slots"
import { readServerRecord } from "../../src/opencode/server"
import { run, selfStart } from "../../src/util/process"
import { claimLane, MAX_LANES, releaseLane } from "../../src/workspace/worktree/lanes"
import { tempDir } from "../helpers/temp"
import { claimJson } from "../helpers/records"

const dir = await tempDir("claim-shapes-")
afterAll(() => dir[Symbol.asyncDispose]())

type Plant = (file: string) => Promise<unknown>
const SHAPES: Record<string, Plant> = {
  "a FIFO": (file) => run(["mkfifo", file]),
  "a symlink to /dev/zero": (file) => symlink("/dev/zero", file),
  "a directory": (file) => mkdir(file),
  garbage: (file) => writeFile(file, "\u0000 not json"),
  "{}": (file) => writeFile(file, "{}"),
  "an array": (file) => writeFile(file, "[]"),
}

let round = 0
const fresh = async () => {
  const base = `${dir.path}/${++round}`
  await mkdir(base, { recursive: true })
  return base
}
/** The lane bound as createWorktree's default: 64 lanes, no task of the engine's in any. */
const NO_TASKS = { max: MAX_LANES, inUse: async () => false }

const setAside = async (parent: string) => (await readdir(parent)).filter((name) => name.includes(".corrupt"))

for (const [shape, plant] of Object.entries(SHAPES)) {
  test(`a slot file or queue ticket that is ${shape} frees its slot`, async () => {
    const base = await fresh()
    await mkdir(`${base}/queue`, { recursive: true })
    await plant(`${base}/slot-0.json`)
    await plant(`${base}/queue/000000000000001-task_x_1.json`)
    const slots = new Slots(base, async () => 1)
    const slot = await slots.take(
      "task_aaaaaaaa_00000001",
      "/nonexistent",
      AbortSignal.timeout(10_000),
      () => undefined,
    )
    expect(slot).toBeDefined()
    expect(await setAside(base)).toEqual(["slot-0.json.corrupt"])
    expect(await setAside(`${base}/queue`)).toHaveLength(1)
    await slot!.release()
  })

  test(`a lane claim that is ${shape} frees its lane`, async () => {
    const registry = await fresh()
    await mkdir(`${registry}/lanes`, { recursive: true })
    await plant(`${registry}/lanes/lane-1.json`)
    expect(await claimLane("/nonexistent", registry, "patch_aaaaaaaa_00000001", undefined, NO_TASKS)).toBe("lane-1")
    // Reclaimed (lanes.ts reports it, and task_list and doctor name it once): the claim is now ours.
    expect(claimJson(readFileSync(`${registry}/lanes/lane-1.json`, "utf8"))).toMatchObject({
      patchId: "patch_aaaaaaaa_00000001",
    })
    await releaseLane(registry, "lane-1", "patch_aaaaaaaa_00000001")
  })

  test(`a group, a writer lock and a server record that are ${shape} read as absent`, async () => {
    const base = await fresh()
    await plant(`${base}/group_aaaaaaaa_00000001.json`)
    await expect(readGroup(base, "group_aaaaaaaa_00000001")).rejects.toThrow("No group")
    const locks = new WriterLocks(base)
    const workspace = "/nonexistent/repo"
    const lockName = `${new Bun.CryptoHasher("sha256").update(workspace).digest("hex").slice(0, 32)}.json`
    await plant(`${base}/${lockName}`)
    expect(await locks.read(workspace)).toBeUndefined()
    const paths = resolvePaths(readFlags({ HOME: base, XDG_STATE_HOME: `${base}/state` }))
    await mkdir(paths.stateDir, { recursive: true })
    await plant(paths.serverFile)
    expect(await readServerRecord(paths)).toBeUndefined()
    expect((await setAside(base)).sort()).toEqual(
      [`${lockName}.corrupt`, "group_aaaaaaaa_00000001.json.corrupt"].sort(),
    )
    expect(existsSync(`${paths.serverFile}.corrupt`)).toBe(true)
  })
}

test("control: a slot and a lane claimed by a live holder stay held; a good group reads", async () => {
  const base = await fresh()
  const slots = new Slots(base, async () => 1)
  const first = await slots.take("task_aaaaaaaa_00000002", "/nonexistent", AbortSignal.timeout(10_000), () => undefined)
  expect(first).toBeDefined()
  // The cap is 1 and the slot is held: a second taker waits until its signal ends.
  expect(
    await slots.take("task_aaaaaaaa_00000003", "/nonexistent", AbortSignal.timeout(600), () => undefined),
  ).toBeUndefined()
  await first!.release()
  const registry = await fresh()
  await mkdir(`${registry}/lanes`, { recursive: true })
  const claim = {
    patchId: "patch_aaaaaaaa_00000009",
    ownerPid: process.pid,
    ownerStart: selfStart(),
    since: new Date().toISOString(),
  }
  await writeFile(`${registry}/lanes/lane-1.json`, JSON.stringify(claim))
  expect(await claimLane("/nonexistent", registry, "patch_aaaaaaaa_00000002", undefined, NO_TASKS)).toBe("lane-2")
  const group = { version: 1, id: "group_aaaaaaaa_00000002", createdAt: new Date().toISOString(), tasks: [] }
  await writeFile(`${base}/group_aaaaaaaa_00000002.json`, JSON.stringify(group))
  expect((await readGroup(base, "group_aaaaaaaa_00000002")).id).toBe(group.id)
  expect(await setAside(base)).toEqual([])
  await rm(`${registry}/lanes`, { recursive: true })
})
