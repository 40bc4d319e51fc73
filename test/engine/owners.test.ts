// A task's claim (engine/records/owners.ts) against real processes and racing takers: one live owner at a time;
// a dead owner's, a reused PID's or a garbage claim is taken back; a live owner's never is.
import { expect, test } from "bun:test"
import { readdir } from "node:fs/promises"
import { TaskOwners } from "../../src/engine/records/owners"
import { writeAtomic, writeJson } from "../../src/util/fs"
import { processStart, spawn } from "../../src/util/process"
import { tempDir } from "../helpers/temp"
import { STATE_KIND } from "../../src/util/sealed"
import { claimJson } from "../helpers/records"

const ID = "task_mj0abc_0123abcd"

test("claims race: of 20 takers at once in two tables, this process wins once and holds; a release frees it", async () => {
  await using dir = await tempDir("oc-orch-owners-")
  const a = new TaskOwners(`${dir.path}/owners`)
  const b = new TaskOwners(`${dir.path}/owners`)
  // One process: every taker here is the same owner, so all say held; the file names it once.
  const results = await Promise.all(Array.from({ length: 20 }, (_, index) => (index % 2 ? a : b).claim(ID)))
  expect(results.every(Boolean)).toBe(true)
  expect((await readdir(`${dir.path}/owners`)).filter((name) => name.endsWith(".json"))).toEqual([`${ID}.json`])
  await a.release(ID)
  expect(await readdir(`${dir.path}/owners`)).toEqual([])
})

test("a live owner's claim holds against a taker (control for the reclaims below)", async () => {
  await using dir = await tempDir("oc-orch-owners-")
  const owner = spawn(["sleep", "30"])
  try {
    await writeJson(`${dir.path}/owners/${ID}.json`, {
      taskID: ID,
      ownerPid: owner.pid,
      ownerStart: processStart(owner.pid),
      since: new Date().toISOString(),
    })
    const owners = new TaskOwners(`${dir.path}/owners`)
    expect(await owners.claim(ID)).toBe(false)
    // Not ours to give up either.
    await owners.release(ID)
    expect(await Bun.file(`${dir.path}/owners/${ID}.json`).exists()).toBe(true)
  } finally {
    await owner.kill(0)
  }
})

test("taken back: an owner SIGKILLed, a PID reused by another process, a garbage file, an empty object", async () => {
  await using dir = await tempDir("oc-orch-owners-")
  const owners = new TaskOwners(`${dir.path}/owners`)
  const file = `${dir.path}/owners/${ID}.json`
  const killed = spawn(["sleep", "30"])
  const start = processStart(killed.pid)
  process.kill(killed.pid, "SIGKILL")
  await killed.exited
  const other = spawn(["sleep", "30"])
  try {
    const planted = [
      { taskID: ID, ownerPid: killed.pid, ownerStart: start, since: "x" },
      // Alive, but started at another time: not the owner.
      { taskID: ID, ownerPid: other.pid, ownerStart: "0:0", since: "x" },
      "{ not json",
      {},
    ]
    for (const claim of planted) {
      if (typeof claim === "string") await writeAtomic(file, claim)
      else await writeJson(file, claim)
      expect(await owners.claim(ID)).toBe(true)
      expect((claimJson(await Bun.file(file).text()) as { ownerPid: number }).ownerPid).toBe(process.pid)
      await owners.release(ID)
    }
  } finally {
    await other.kill(0)
  }
})

test("a sealed claim changed on disk to name a live process fails its checksum: set aside, and the task is taken back; control: the same claim unsealed is trusted", async () => {
  await using dir = await tempDir("oc-orch-owners-")
  const owners = new TaskOwners(`${dir.path}/owners`)
  const file = `${dir.path}/owners/${ID}.json`
  expect(await owners.claim(ID)).toBe(true)
  const sealed = await Bun.file(file).text()
  expect(sealed.startsWith(`${STATE_KIND} `)).toBe(true)
  await owners.release(ID)
  const unrelated = spawn(["sleep", "30"])
  try {
    // What a bad sector or a stray write could leave: the header kept, the body now naming a live
    // process that never owned the task, valid JSON of the right shape.
    const forged = { taskID: ID, ownerPid: unrelated.pid, ownerStart: processStart(unrelated.pid), since: "x" }
    const header = sealed.slice(0, sealed.indexOf("\n") + 1)
    await writeAtomic(file, `${header}${JSON.stringify(forged)}`)
    expect(await owners.claim(ID)).toBe(true)
    expect((await readdir(`${dir.path}/owners`)).filter((name) => name.includes(".corrupt"))).toHaveLength(1)
    await owners.release(ID)
    // The control: without the seal the same claim is believed, and the task stays with that process.
    await writeAtomic(file, JSON.stringify(forged))
    expect(await owners.claim(ID)).toBe(false)
  } finally {
    await unrelated.kill(0)
  }
})

test("a name that is not a task id is never a file: refused, nothing written", async () => {
  await using dir = await tempDir("oc-orch-owners-")
  const owners = new TaskOwners(`${dir.path}/owners`)
  for (const id of ["../escape", "task_/x", "", "task_a b"]) expect(await owners.claim(id)).toBe(false)
  expect(await readdir(dir.path)).toEqual([])
})
