// The ledger's cells (ledger-days.ts, ledger-table.ts): what stats reports from them equals the exact
// sum over the records (summarize), whatever order the records were saved, changed and removed in, an
// index from before the cells, a writer killed mid-save, and two processes writing at once.
import { Database } from "bun:sqlite"
import { afterAll, describe, expect, test } from "bun:test"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { type Stats, type StatsRow, summarize } from "../../src/engine/ledger/ledger"
import { TaskStore } from "../../src/engine/store/task-store"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { spawn } from "../../src/util/process"
import { sampleRecord } from "./_records"

const CHILD = `${import.meta.dir}/_store-child.ts`
const made: string[] = []
const DAY = 86_400_000
const START = Date.parse("2026-11-20T00:00:00Z")

afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true })
})

async function freshDir() {
  const dir = await mkdtemp(`${tmpdir()}/oc-orch-cells-`)
  made.push(dir)
  return dir
}

/** A small deterministic generator, so a failure can be run again. */
function random(seed: number) {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    return state / 2 ** 31
  }
}

function randomRecord(next: () => number): TaskRecord {
  const at = new Date(START + Math.floor(next() * 6 * DAY)).toISOString()
  const status = (["succeeded", "failed", "cancelled", "running"] as const)[Math.floor(next() * 4)]!
  const record = sampleRecord({ status, role: next() < 0.5 ? "scout" : "worker", finishedAt: at, updatedAt: at })
  if (!record.result) return { ...record, finishedAt: undefined }
  const tokens = { input: Math.floor(next() * 900), output: 40, reasoning: 3, cacheRead: 7, cacheWrite: 1 }
  const model = ["local/a", "local/b", "local/c"][Math.floor(next() * 3)]!
  Object.assign(record.result, { model, tokens, cost: next() / 10, steps: 1 + Math.floor(next() * 9) })
  Object.assign(record.result, {
    durationMs: Math.floor(next() * 90_000),
    bytes: { transcript: 0, logs: 0, keptOut: 900, returned: 70 },
  })
  if (next() < 0.3)
    record.fallbackFrom = [
      { model: "local/z", why: "quota", kind: "quota", tokens: { ...tokens, input: 5 }, cost: 0.01 },
    ]
  return record
}

/** The two ledgers agree: every count and sum, costs to rounding, medians within 1% (and a millisecond). */
function expectSame(got: Stats, want: Stats) {
  const shape = (row: StatsRow) => ({ ...row, cost: 0, medianDurationMs: 0 })
  expect(got.rows.map(shape)).toEqual(want.rows.map(shape))
  expect(shape(got.total)).toEqual(shape(want.total))
  for (const [i, row] of [...want.rows, want.total].entries()) {
    const mine = [...got.rows, got.total][i]!
    expect(mine.cost).toBeCloseTo(row.cost, 9)
    expect(Math.abs(mine.medianDurationMs - row.medianDurationMs)).toBeLessThanOrEqual(row.medianDurationMs / 100 + 1)
  }
}

async function randomStore(seed: number, count: number) {
  const dir = await freshDir()
  const store = new TaskStore(dir)
  const next = random(seed)
  const records = Array.from({ length: count }, () => randomRecord(next))
  for (const record of records) await store.save(record)
  // Some change after they were saved: a running task finishes, a finished one is saved again.
  for (const record of records.filter(() => next() < 0.3)) {
    const finished = randomRecord(next)
    Object.assign(record, { status: finished.status, result: finished.result, finishedAt: finished.finishedAt })
    record.revision++
    await store.save(record)
  }
  return { dir, store, records }
}

describe("the cells against the exact sum", () => {
  test("random records saved and changed: every period's stats equals summarize over the records", async () => {
    const { store, records } = await randomStore(7, 300)
    for (const since of [undefined, START + 2 * DAY, START + 2.5 * DAY, START + 5.9 * DAY, START + 9 * DAY])
      expectSame(await store.stats(since), summarize(records, since))
    expect((await store.stats()).total.tasks).toBeGreaterThan(150)
  })

  test("control: a cell that missed an update is seen by the same comparison", async () => {
    const { store, records } = await randomStore(11, 60)
    expectSame(await store.stats(), summarize(records))
    const db = new Database(store.views.index.file)
    // What one skipped update of one record leaves: its day's scout cells one task short.
    const day = db.query("SELECT day FROM ledger_cells WHERE role = 'scout' LIMIT 1").get() as { day: string }
    db.query("UPDATE ledger_cells SET tasks = tasks - 1 WHERE role = 'scout' AND day = ?").run(day.day)
    db.close()
    let caught = false
    try {
      expectSame(await store.stats(), summarize(records))
    } catch {
      caught = true
    }
    expect(caught).toBe(true)
  })

  test("records retention removed stay counted; the rows alone no longer hold them", async () => {
    const { store, records } = await randomStore(13, 120)
    const gone = records.filter((record) => record.result).slice(0, 40)
    for (const record of gone) await store.remove(record.id)
    expectSame(await store.stats(), summarize(records))
    expectSame(await store.stats(START + 3 * DAY), summarize(records, START + 3 * DAY))
    // Control: summed from the rows left, the removed records are missing.
    const left = summarize(await store.ledger())
    expect(left.total.tasks).toBe(summarize(records).total.tasks - 40)
  })

  test("a row garbled in place is read again from its record; stats stays exact", async () => {
    const { store, records } = await randomStore(17, 80)
    const target = records.find((record) => record.result)!
    const db = new Database(store.views.index.file)
    db.query("UPDATE tasks SET ledger = 'garbage' WHERE id = ?").run(target.id)
    db.close()
    expectSame(await store.stats(), summarize(records))
    // Then changed: what the garbled row added is unknown, so the cells are summed again from the rows.
    target.revision++
    target.result!.cost = 3
    await store.save(target)
    expectSame(await store.stats(), summarize(records))
    expectSame(await store.stats(START + 1.5 * DAY), summarize(records, START + 1.5 * DAY))
  })
})

describe("an index from before the cells", () => {
  test("is migrated on first open: the columns added, the cells summed once from its rows", async () => {
    const { dir, store, records } = await randomStore(19, 150)
    store.views.index.close()
    const db = new Database(`${dir}/.index/records.sqlite`)
    db.exec(`DROP TABLE ledger_cells; DROP TABLE ledger_durations; DROP INDEX tasks_done; DROP INDEX tasks_unread;
      ALTER TABLE tasks DROP COLUMN done; ALTER TABLE intents DROP COLUMN prune; DELETE FROM meta WHERE key = 'ledger'`)
    db.close()
    const again = new TaskStore(dir)
    expectSame(await again.stats(START + 2.2 * DAY), summarize(records, START + 2.2 * DAY))
    expectSame(await again.stats(), summarize(records))
    const check = new Database(`${dir}/.index/records.sqlite`)
    expect(check.query("SELECT count(*) AS n FROM ledger_cells").get()).not.toEqual({ n: 0 })
    expect(check.query("SELECT count(*) AS n FROM tasks WHERE finished = 1 AND done IS NULL").get()).toEqual({ n: 0 })
    check.close()
    // Later saves keep the migrated cells exact.
    const extra = randomRecord(random(23))
    await again.save(extra)
    expectSame(await again.stats(), summarize([...records, extra]))
    again.views.index.close()
  })
})

/** Lines a child printed until it had printed `count` of them. */
async function linesUntil(stream: ReadableStream<Uint8Array>, count: number) {
  const reader = stream.getReader()
  let text = ""
  while (text.split("\n").length <= count) {
    const { value, done } = await reader.read()
    if (done) break
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return text
}

describe("writers killed and racing", () => {
  test("a SIGKILL mid-save leaves cells equal to the records on disk", async () => {
    const dir = await freshDir()
    for (let round = 0; round < 3; round++) {
      const child = spawn([process.execPath, CHILD, "save", dir, `k${round}`, "0"])
      await linesUntil(child.stdout, 20 + round * 9)
      process.kill(child.pid, "SIGKILL")
      await child.exited
      const store = new TaskStore(dir)
      const stats = await store.stats()
      expectSame(stats, summarize(await store.list()))
      expect(stats.total.tasks).toBeGreaterThanOrEqual(20)
      store.views.index.close()
    }
  }, 120_000)

  test("two processes saving at once: the cells count every task of both", async () => {
    const dir = await freshDir()
    const children = ["a", "b"].map((tag) => spawn([process.execPath, CHILD, "mixed", dir, tag, "50"]))
    const codes = await Promise.all(children.map((child) => child.exited))
    expect(codes).toEqual([0, 0])
    const store = new TaskStore(dir)
    const stats = await store.stats()
    expect(stats.total.tasks).toBe(100)
    expectSame(stats, summarize(await store.list()))
    store.views.index.close()
  }, 120_000)
})
