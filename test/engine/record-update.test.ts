// TaskStore.update, the one way a record changes: the edit lands on the record this process holds, the
// revision is bumped once per update (never for a quiet one), and what is on disk once the writes settle
// is that record, whatever mix of updates raced; a deferred edit reaches the disk with the next update.
import { expect, test } from "bun:test"
import { newRecord, newTaskId, noteProgress } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { TaskStore } from "../../src/engine/store/task-store"
import { tempDir } from "../helpers/temp"

const fresh = () =>
  newRecord(
    { role: "worker", agent: "a", title: "t", writable: true, brief: "do it" },
    { id: newTaskId(), workspace: "/repo", operationMs: 60_000 },
  )

/** An edit setting these fields. */
const setting = (fields: Partial<TaskRecord>) => (r: TaskRecord) => Object.assign(r, fields)

/** The record as another process reads it: the file itself, not this store's memory. */
const onDisk = async (store: TaskStore, id: string) => (await new TaskStore(store.dir).read(id))!

test("an update edits the held record itself, bumps its revision, stamps it and saves it", async () => {
  await using dir = await tempDir("oc-orch-update-")
  const store = new TaskStore(`${dir.path}/tasks`)
  const record = fresh()
  await store.save(record)
  const before = record.updatedAt
  await Bun.sleep(5)
  const held = record
  await store.update(record, (r) => {
    r.sessionID = "ses_1"
    r.sessions.push("ses_1")
  })
  expect(held.sessionID).toBe("ses_1")
  expect(record.revision).toBe(1)
  expect(record.updatedAt > before).toBe(true)
  expect(await onDisk(store, record.id)).toEqual(record)
})

test("quiet keeps the revision, deferred waits for the next update", async () => {
  await using dir = await tempDir("oc-orch-update-")
  const store = new TaskStore(`${dir.path}/tasks`)
  const record = fresh()
  await store.save(record)
  await store.update(record, setting({ note: "spent" }), { quiet: true })
  expect(record.revision).toBe(0)
  expect((await onDisk(store, record.id)).note).toBe("spent")
  await store.update(record, setting({ activity: { step: 1, at: new Date().toISOString() } }), {
    quiet: true,
    deferred: true,
  })
  expect((await onDisk(store, record.id)).activity).toBeUndefined()
  await store.update(record, (r) => noteProgress(r, "step 1"))
  const written = await onDisk(store, record.id)
  expect(written.revision).toBe(1)
  expect(written.activity).toEqual(record.activity)
  expect(written).toEqual(record)
})

test("racing updates of every kind end with the disk equal to the held record, one bump per counted one", async () => {
  await using dir = await tempDir("oc-orch-update-")
  const store = new TaskStore(`${dir.path}/tasks`)
  const record = fresh()
  await store.save(record)
  const writes: Array<Promise<void>> = []
  let counted = 0
  for (let i = 0; i < 300; i++) {
    const kind = i % 4
    if (kind === 0) writes.push(store.update(record, (r) => noteProgress(r, `line ${i}`)))
    if (kind === 1)
      writes.push(
        store.update(record, setting({ activity: { step: i, at: new Date().toISOString() } }), { quiet: true }),
      )
    if (kind === 2) void store.update(record, (r) => void r.sessions.push(`ses_${i}`), { quiet: true, deferred: true })
    if (kind === 3) writes.push(store.update(record, setting({ asks: undefined })))
    if (kind === 0 || kind === 3) counted++
    // Some callers wait for their write, most do not: the store's chain orders them either way.
    if (i % 37 === 0) await writes.at(-1)
  }
  await Promise.all(writes)
  expect(record.revision).toBe(counted)
  expect(await onDisk(store, record.id)).toEqual(record)
})

test("control: a change made beside update is on no disk, so the equality above can fail", async () => {
  await using dir = await tempDir("oc-orch-update-")
  const store = new TaskStore(`${dir.path}/tasks`)
  const record: TaskRecord = fresh()
  await store.save(record)
  // The save above resolved: nothing of this process writes the record until the next update.
  record.sessionID = "ses_beside"
  expect(await onDisk(store, record.id)).not.toEqual(record)
  await store.update(record, () => {})
  expect(await onDisk(store, record.id)).toEqual(record)
})
