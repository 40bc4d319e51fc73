import { expect, test } from "bun:test"
import { readdir } from "node:fs/promises"
import { Slots } from "../../src/engine/slots"
import { writeJson } from "../../src/util/fs"
import { tempDir } from "../helpers/temp"

const never = new AbortController().signal

test("two slot tables on one directory (two MCP processes) share the cap; a release lets the first queued one in", async () => {
  await using dir = await tempDir("oc-orch-slots-")
  const a = new Slots(`${dir.path}/slots`, async () => 2)
  const b = new Slots(`${dir.path}/slots`, async () => 2)
  const first = await a.take("task_a_1", never, () => {})
  const second = await b.take("task_b_2", never, () => {})
  expect(first && second).toBeTruthy()
  expect(await a.held(2)).toBe(2)
  const queued: number[] = []
  const third = b.take("task_b_3", never, (ahead) => queued.push(ahead))
  await Bun.sleep(50)
  const fourth = a.take("task_a_4", never, (ahead) => queued.push(ahead))
  await Bun.sleep(300)
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
  await writeJson(`${dir.path}/slots/slot-0.json`, { taskID: "task_dead_1", ownerPid: 4_194_305, ownerStart: "0:0", since: new Date().toISOString() })
  await writeJson(`${dir.path}/slots/queue/000000000000001-task_dead_2.json`, { taskID: "task_dead_2", ownerPid: 4_194_305, ownerStart: "0:0", since: new Date().toISOString() })
  const slot = await slots.take("task_live_1", never, () => {})
  expect(slot).toBeDefined()
  const controller = new AbortController()
  const waiting = slots.take("task_live_2", controller.signal, () => {})
  await Bun.sleep(100)
  controller.abort()
  expect(await waiting).toBeUndefined()
  expect(await readdir(`${dir.path}/slots/queue`)).toEqual([])
  await slot!.release()
  expect(await slots.held(1)).toBe(0)
})
