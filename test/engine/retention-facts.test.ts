// Retention decides on facts, not on the dates a record states: a finished task's result stays at
// least RECORD_MIN_MS by this machine's clock (the time its record file was last written here), one no
// parent was handed yet stays UNREAD_RECORD_MS whatever the count, a record dated in the future is
// unknown and kept, and the ledger (stats) still counts every finished
// task after records are pruned while another process is finishing tasks. Ten minutes of passes are
// simulated by moving the pass's clock, not by sleeping. No OpenCode is needed: no session is parked.
// A waiting patch is never retention's to remove, at any stated age (the real sweep's pass over a
// month-old waiting patch is in retention-schedule.test.ts).
import { afterAll, describe, expect, test } from "bun:test"
import { mkdtemp, rm, utimes } from "node:fs/promises"
import { tmpdir } from "node:os"
import { prune, RECORD_MAX, RECORD_MS, UNREAD_RECORD_MS } from "../../src/engine/retention/retention"
import { appliedExpired } from "../../src/engine/retention/sweep"
import { TaskStore } from "../../src/engine/store/task-store"
import { spawn } from "../../src/util/process"
import type { PatchRecord } from "../../src/workspace/patches/patches"
import { sampleRecord } from "./_records"

const DAY = 24 * 3600_000
const made: string[] = []
const CHILD = `${import.meta.dir}/_store-child.ts`

afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true })
})

async function freshStore() {
  const dir = await mkdtemp(`${tmpdir()}/oc-orch-facts-`)
  made.push(dir)
  return new TaskStore(dir)
}

const iso = (at: number) => new Date(at).toISOString()

describe("a finished result nobody read yet", () => {
  /** Past the count cap: results read when they finished, stating a month ago, and some a date years ahead. */
  async function crowded(store: TaskStore, now: number) {
    const stated = Array.from({ length: RECORD_MAX + 20 }, (_, i) => {
      const finishedAt = iso(i % 5 === 0 ? Date.parse("2099-01-01T00:00:00Z") : now - 30 * DAY)
      return sampleRecord({ finishedAt, resultReadAt: finishedAt })
    })
    for (const record of stated) await store.save(record)
    return stated
  }

  test("survives ten minutes of passes among a month-old crowd and records from the future", async () => {
    const store = await freshStore()
    const start = Date.now()
    const crowd = await crowded(store, start)
    const result = sampleRecord({ finishedAt: iso(start) })
    await store.save(result)
    for (let at = start; at <= start + 10 * 60_000; at += 30_000) await prune(store, undefined, { now: at })
    expect((await store.read(result.id))?.result?.report).toBe("done")
    // The crowd's files were written just now: a month-old date they state does not age them.
    for (const record of crowd) expect((await store.read(record.id))?.id).toBe(record.id)
  })

  test("once every file is a week and more old, the read crowd goes and the unread result stays until it is read", async () => {
    const store = await freshStore()
    const start = Date.now()
    const crowd = await crowded(store, start)
    const result = sampleRecord({ finishedAt: iso(start) })
    await store.save(result)
    const later = start + RECORD_MS + DAY
    await prune(store, undefined, { now: later })
    expect((await store.read(result.id))?.result?.report).toBe("done")
    // Control: handed to a parent (as task_result does), its age runs from the reading, and past the keep time it goes.
    const read = (await store.read(result.id))!
    await store.update(read, (r) => Object.assign(r, { resultReadAt: iso(Date.now()) }), { quiet: true })
    await prune(store, undefined, { now: Date.now() + RECORD_MS + DAY })
    expect(await store.read(result.id)).toBeUndefined()
    // Those dated in the future are unknown, never aged: they stay whatever the clock.
    const future = crowd.filter((record) => record.finishedAt!.startsWith("2099"))
    for (const record of future) expect((await store.read(record.id))?.id).toBe(record.id)
    for (const record of crowd.filter((r) => !future.includes(r))) expect(await store.read(record.id)).toBeUndefined()
  })

  test("a record stating it finished a month ago, its file written a month ago, goes (its age is a fact)", async () => {
    const store = await freshStore()
    const now = Date.now()
    const monthAgo = iso(now - 30 * DAY)
    const old = sampleRecord({ finishedAt: monthAgo, resultReadAt: monthAgo })
    await store.save(old)
    await utimes(store.file(old.id), new Date(now - 30 * DAY), new Date(now - 30 * DAY))
    expect(await prune(store, undefined, { now })).toMatchObject({ recordsRemoved: 1 })
  })

  test("an unread result goes only past UNREAD_RECORD_MS by its file's time (control: a day short, it stays)", async () => {
    const store = await freshStore()
    const now = Date.now()
    const records = [UNREAD_RECORD_MS - DAY, UNREAD_RECORD_MS + DAY].map((ago) =>
      sampleRecord({ finishedAt: iso(now - ago) }),
    )
    for (const [index, record] of records.entries()) {
      await store.save(record)
      const at = new Date(now - [UNREAD_RECORD_MS - DAY, UNREAD_RECORD_MS + DAY][index]!)
      await utimes(store.file(record.id), at, at)
    }
    expect(await prune(store, undefined, { now })).toMatchObject({ recordsRemoved: 1 })
    expect((await store.read(records[0]!.id))?.id).toBe(records[0]!.id)
    expect(await store.read(records[1]!.id)).toBeUndefined()
  })
})

describe("stats through pruning under load", () => {
  test("another process finishing tasks while passes prune: stats counts every finished task", async () => {
    const store = await freshStore()
    const count = 60
    const child = spawn([process.execPath, CHILD, "save", store.dir, "load", String(count)])
    const finished = (async () => {
      const out = await new Response(child.stdout).text()
      await child.exited
      return out.split("\n").filter((line) => line.startsWith("saved ")).length
    })()
    let done = false
    void finished.then(() => (done = true))
    let removed = 0
    // The pass's clock past the unread keep time: every finished record it sees (none read) is past it.
    const ahead = () => Date.now() + UNREAD_RECORD_MS + 2 * RECORD_MS
    while (!done) removed += (await prune(store, undefined, { now: ahead() })).recordsRemoved
    removed += (await prune(store, undefined, { now: ahead() })).recordsRemoved
    expect(await finished).toBe(count)
    expect(removed).toBeGreaterThan(0)
    const stats = await store.stats()
    expect(stats.total.tasks).toBe(count)
    expect((await new TaskStore(store.dir).stats()).total.tasks).toBe(count)
    // Control: the rows left alone count only the records still on disk.
    expect((await store.ledger()).length).toBe(count - removed)
  }, 120_000)
})

describe("a waiting patch (collected, never applied, nobody reviewed it)", () => {
  const patch = (fields: Partial<PatchRecord>) =>
    ({ status: "ready", digest: "d1", createdAt: iso(Date.now()), ...fields }) as PatchRecord

  test("is never expired by retention, a month old or dated in the future", () => {
    const now = Date.now()
    expect(appliedExpired(patch({ createdAt: iso(now - 30 * DAY) }), now)).toBe(false)
    expect(appliedExpired(patch({ createdAt: "2099-01-01T00:00:00.000Z" }), now)).toBe(false)
    // Applied once, then waiting again (a later turn's patch): waiting, kept whatever its old apply's date.
    expect(appliedExpired(patch({ appliedDigest: "d0", appliedAt: iso(now - 30 * DAY) }), now)).toBe(false)
    // An applied patch dated in the future is not aged either.
    expect(appliedExpired(patch({ appliedDigest: "d1", appliedAt: "2099-01-01T00:00:00.000Z" }), now)).toBe(false)
  })

  test("control: the same patch applied a month ago is expired", () => {
    const now = Date.now()
    expect(appliedExpired(patch({ appliedDigest: "d1", appliedAt: iso(now - 30 * DAY) }), now)).toBe(true)
  })
})
