import { describe, expect, test } from "bun:test"
import { link, readdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { HANDOVER_MS, Slots } from "../../src/engine/capacity/slots"
import { writeJson } from "../../src/util/fs"
import { tempDir } from "../helpers/temp"
import { claimJson } from "../helpers/records"
import { until } from "../helpers/until"

const never = new AbortController().signal
const tickets = (dir: string) => readdir(`${dir}/slots/queue`).catch(() => [] as string[])

test("two slot tables on one directory (two MCP processes) share the cap; a release lets the first queued one in", async () => {
  await using dir = await tempDir("oc-orch-slots-")
  const a = new Slots(`${dir.path}/slots`, async () => 2)
  const b = new Slots(`${dir.path}/slots`, async () => 2)
  const first = await a.take("task_a_1", "/ws", never, () => {})
  const second = await b.take("task_b_2", "/ws", never, () => {})
  expect(first && second).toBeTruthy()
  expect(await a.held(2)).toBe(2)
  const queued: number[] = []
  const third = b.take("task_b_3", "/ws", never, (ahead) => queued.push(ahead))
  // The third's ticket is in the queue before the fourth asks: the queue's order is theirs.
  expect(await until(async () => (await tickets(dir.path)).length === 1, 10_000)).toBe(true)
  const fourth = a.take("task_a_4", "/ws", never, (ahead) => queued.push(ahead))
  expect(await until(() => queued.length === 2, 10_000)).toBe(true)
  expect(queued.sort()).toEqual([0, 1])
  await first!.release()
  const thirdSlot = await third
  expect(await a.held(2)).toBe(2)
  let fourthIn = false
  void fourth.then(() => (fourthIn = true))
  await Bun.sleep(300)
  expect(fourthIn).toBe(false)
  await thirdSlot!.release()
  await (await fourth)!.release()
  await second!.release()
  expect(await a.held(2)).toBe(0)
  expect(await readdir(`${dir.path}/slots/queue`)).toEqual([])
})

test("a dead owner's slot and ticket are reclaimed; an aborted wait leaves no ticket", async () => {
  await using dir = await tempDir("oc-orch-slots-")
  const slots = new Slots(`${dir.path}/slots`, async () => 1)
  // PID 2^22 + 1 is above pid_max's default ceiling for most systems: no such process.
  await writeJson(`${dir.path}/slots/slot-0.json`, {
    taskID: "task_dead_1",
    ownerPid: 4_194_305,
    ownerStart: "0:0",
    since: new Date().toISOString(),
  })
  await writeJson(`${dir.path}/slots/queue/000000000000001-task_dead_2.json`, {
    taskID: "task_dead_2",
    ownerPid: 4_194_305,
    ownerStart: "0:0",
    since: new Date().toISOString(),
  })
  const slot = await slots.take("task_live_1", "/ws", never, () => {})
  expect(slot).toBeDefined()
  const controller = new AbortController()
  const waiting = slots.take("task_live_2", "/ws", controller.signal, () => {})
  // Aborted once its ticket is written, so the abort has one to take back.
  expect(await until(async () => (await tickets(dir.path)).length === 1, 10_000)).toBe(true)
  controller.abort()
  expect(await waiting).toBeUndefined()
  expect(await readdir(`${dir.path}/slots/queue`)).toEqual([])
  await slot!.release()
  expect(await slots.held(1)).toBe(0)
})

// PID 2^22 + 1: no such process (see above). A slot written a minute ago is past the handover window.
const deadSlot = (taskID: string, touchedMsAgo = 60_000) => {
  const at = new Date(Date.now() - touchedMsAgo).toISOString()
  return { taskID, ownerPid: 4_194_305, ownerStart: "0:0", since: at, workspace: "/ws", touched: at }
}

test("a dead owner's slot stays taken while its task's session is busy on the server, and is free once it is not", async () => {
  await using dir = await tempDir("oc-orch-slots-")
  let busy = true
  const asked: string[] = []
  const slots = new Slots(
    `${dir.path}/slots`,
    async () => 1,
    async (taskID, workspace) => {
      asked.push(`${taskID} ${workspace}`)
      return busy
    },
  )
  await writeJson(`${dir.path}/slots/slot-0.json`, deadSlot("task_dead_1"))
  let taken = false
  const waiting = slots
    .take("task_live_1", "/ws2", never, () => {})
    .then((slot) => {
      taken = true
      return slot
    })
  await Bun.sleep(600)
  expect(taken).toBe(false)
  expect(await slots.held(1)).toBe(1)
  expect(asked).toContain("task_dead_1 /ws")
  busy = false
  const slot = await waiting
  expect(slot).toBeDefined()
  expect((claimJson(await Bun.file(`${dir.path}/slots/slot-0.json`).text()) as { taskID: string }).taskID).toBe(
    "task_live_1",
  )
  await slot!.release()
})

test("a dead owner's slot is held within the handover window, and when the server cannot say", async () => {
  await using dir = await tempDir("oc-orch-slots-")
  const idle = new Slots(
    `${dir.path}/slots`,
    async () => 1,
    async () => false,
  )
  await writeJson(`${dir.path}/slots/slot-0.json`, deadSlot("task_dead_1", 1000))
  expect(await idle.held(1)).toBe(1)
  await writeJson(`${dir.path}/slots/slot-0.json`, deadSlot("task_dead_1", HANDOVER_MS + 1000))
  const unknown = new Slots(
    `${dir.path}/slots`,
    async () => 1,
    () => Promise.reject(new Error("no answer")),
  )
  expect(await unknown.held(1)).toBe(1)
  // The control: the same slot, the server saying no session is busy, is free.
  expect(await idle.held(1)).toBe(0)
})

test("a process taking a task over adopts that task's slot, never another task's; its release frees it", async () => {
  await using dir = await tempDir("oc-orch-slots-")
  const slots = new Slots(
    `${dir.path}/slots`,
    async () => 2,
    async () => true,
  )
  await writeJson(`${dir.path}/slots/slot-0.json`, deadSlot("task_dead_1"))
  await writeJson(`${dir.path}/slots/slot-1.json`, deadSlot("task_dead_2"))
  expect(await slots.adopt("task_other", "/ws")).toBeUndefined()
  const adopted = await slots.adopt("task_dead_1", "/ws")
  expect(adopted).toBeDefined()
  const holder = claimJson(await Bun.file(`${dir.path}/slots/slot-0.json`).text()) as Record<string, unknown>
  expect([holder.taskID, holder.ownerPid]).toEqual(["task_dead_1", process.pid])
  expect((claimJson(await Bun.file(`${dir.path}/slots/slot-1.json`).text()) as { ownerPid: number }).ownerPid).toBe(
    4_194_305,
  )
  expect(await slots.held(2)).toBe(2)
  await adopted!.release()
  expect(await readdir(`${dir.path}/slots`)).toEqual(expect.not.arrayContaining(["slot-0.json"]))
  expect(
    (await readdir(`${dir.path}/slots`)).filter((name) => name.includes(".adopt") || name.endsWith(".tmp")),
  ).toEqual([])
})

// Once a task is finished, another process may reclaim its slot and link its own claim there while the
// task's release runs. A release that read the holder (its own) and then removed the name would remove the
// claim linked in between, and a third task would run beside two (what a fan-out under load showed).
describe("a release removes the file its own take made, never the name", () => {
  const slotFile = (dir: string) => `${dir}/slots/slot-0.json`

  test("attack: the name relinked to another file holding the same claim (what a read-then-remove release sees as its own) is left", async () => {
    await using dir = await tempDir("oc-orch-slots-")
    const slots = new Slots(`${dir.path}/slots`, async () => 1)
    const slot = await slots.take("task_a_1", "/ws", never, () => {})
    // Another file at the name, the very claim in it: the interleaving's end state, made without racing.
    const claim = await readFile(slotFile(dir.path))
    await writeFile(`${slotFile(dir.path)}.other`, claim)
    await rename(`${slotFile(dir.path)}.other`, slotFile(dir.path))
    await slot!.release()
    expect((await readFile(slotFile(dir.path))).equals(claim)).toBe(true)
    expect((await readdir(`${dir.path}/slots`)).filter((name) => name.endsWith(".reap"))).toEqual([])
  })

  test("a finished task's slot reclaimed and taken by another process: the finished task's release leaves the new claim", async () => {
    await using dir = await tempDir("oc-orch-slots-")
    const finished = new Set<string>()
    const followed = async (holder: { taskID: string }) => !finished.has(holder.taskID)
    const a = new Slots(`${dir.path}/slots`, async () => 1, undefined, followed)
    const b = new Slots(`${dir.path}/slots`, async () => 1, undefined, followed)
    const first = await a.take("task_a_1", "/ws", never, () => {})
    finished.add("task_a_1")
    const second = await b.take("task_b_2", "/ws", never, () => {})
    expect(second).toBeDefined()
    await first!.release()
    expect((claimJson(await Bun.file(slotFile(dir.path)).text()) as { taskID: string }).taskID).toBe("task_b_2")
    expect(await b.held(1)).toBe(1)
    await second!.release()
    expect(await b.held(1)).toBe(0)
  })

  test("control: a slot touched (its file rewritten) and then released is freed: the handle follows its own rewrite", async () => {
    await using dir = await tempDir("oc-orch-slots-")
    const slots = new Slots(`${dir.path}/slots`, async () => 1)
    const slot = await slots.take("task_a_1", "/ws", never, () => {})
    const before = (claimJson(await Bun.file(slotFile(dir.path)).text()) as { since: string }).since
    await Bun.sleep(5)
    await slot!.touch()
    const touched = claimJson(await Bun.file(slotFile(dir.path)).text()) as { since: string; touched: string }
    expect([touched.since, touched.touched > before]).toEqual([before, true])
    await slot!.release()
    expect(await readdir(`${dir.path}/slots`)).toEqual(["queue"])
  })
})

/**
 * Counts, in another process, how often `file` is missing while it watches for `seconds` (a tight loop of
 * lstat). A taker links a slot only where its name is absent: an adoption that empties the name for a
 * moment lets one in beside the session the adopted task still runs.
 */
function watchAbsent(file: string, seconds: number) {
  const watcher = Bun.spawn(
    [
      "python3",
      "-c",
      `import os,sys,time
e=time.time()+${seconds};n=0;looks=0
while time.time()<e:
  looks+=1
  try: os.lstat(sys.argv[1])
  except FileNotFoundError: n+=1
print(n, looks)`,
      file,
    ],
    { stdout: "pipe" },
  )
  return async () => (await new Response(watcher.stdout).text()).trim().split(" ").map(Number) as [number, number]
}

/** Plants a dead owner's hold on `taskID` at `file` by renaming over it, so the planting empties no name. */
async function plantOver(file: string, taskID: string) {
  await writeJson(`${file}.plant`, deadSlot(taskID))
  await rename(`${file}.plant`, file)
}

test("adopting a dead owner's slot never leaves its name empty (a watcher in another process sees it there always)", async () => {
  await using dir = await tempDir("oc-orch-slots-")
  const slots = new Slots(
    `${dir.path}/slots`,
    async () => 1,
    async () => true,
  )
  const file = `${dir.path}/slots/slot-0.json`
  await plantOver(file, "task_dead_0")
  const absent = watchAbsent(file, 3)
  let adopted = 0
  const end = Date.now() + 2_500
  for (let round = 1; Date.now() < end; round++) {
    if (await slots.adopt(`task_dead_${round - 1}`, "/ws")) adopted++
    await plantOver(file, `task_dead_${round}`)
  }
  const [missing, looks] = await absent()
  expect(adopted).toBeGreaterThan(50)
  expect(looks).toBeGreaterThan(10_000)
  expect(missing).toBe(0)
})

test("control: the watcher sees the name empty when an adoption moves the old holder aside before linking its own", async () => {
  await using dir = await tempDir("oc-orch-slots-")
  const file = `${dir.path}/slots/slot-0.json`
  await plantOver(file, "task_dead_0")
  const absent = watchAbsent(file, 3)
  const end = Date.now() + 2_500
  for (let round = 1; Date.now() < end; round++) {
    // The earlier adoption: rename aside, read it, write the new holder, link it in.
    await rename(file, `${file}.aside`)
    await Bun.file(`${file}.aside`).text()
    await writeJson(`${file}.tmp`, deadSlot(`task_dead_${round}`))
    await link(`${file}.tmp`, file)
    await rm(`${file}.tmp`)
    await rm(`${file}.aside`)
  }
  const [missing] = await absent()
  expect(missing).toBeGreaterThan(0)
})
