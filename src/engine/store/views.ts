// The store's listings answered from its index (sqlite-index.ts): a page of task_list, a key lookup,
// the ledger's rows and the unfinished tasks recovery looks at. Each reads only the record files it
// returns, through their schema, so a record set aside or removed meanwhile drops out (and out of the
// index), and a row older than its record is brought up to date. When the index cannot be used (its
// disk is full, it is locked past the busy timeout), every view answers from the full scan instead.
import {
  type Stats,
  summarize,
  addRecord,
  doneOf,
  statsOf,
  placeOf,
  type IndexQuery,
  type LedgerRecord,
} from "../ledger"
import type { IndexRow, TaskIndex } from "./sqlite-index"
import type { TaskRecord } from "../records"

/** What the views need of TaskStore. */
export interface StoreSide {
  read(id: string): Promise<TaskRecord | undefined>
  /** Every record, read one by one: the slow path, and the fallback. */
  scan(): Promise<TaskRecord[]>
  /** Records this process holds newer than their files (a write that failed, to be retried). */
  held(): TaskRecord[]
  finished(status: string): boolean
}

/** How long the index is left alone after it failed (a full disk, a lock held too long). */
const INDEX_RETRY_MS = 30_000

/** The index with its failure handling: a failed index is never a failed save, only a slower listing. */
class IndexGate {
  /** Until when the index is left alone after a failure; any write it missed meanwhile means a rebuild. */
  private offUntil = 0
  private missed = false

  constructor(readonly index: TaskIndex) {}

  /** Runs `work` on the index; undefined when the index is off or failed (the write is made up later). */
  async indexed<T>(work: (index: TaskIndex) => Promise<T>): Promise<T | undefined> {
    if (!(await this.usable())) {
      this.missed = true
      return undefined
    }
    try {
      return await work(this.index)
    } catch (error) {
      this.failed(error)
      this.missed = true
      return undefined
    }
  }

  async usable(): Promise<boolean> {
    if (Date.now() < this.offUntil) return false
    if (!this.missed) return true
    // Writes went past the index while it was off: the next catch-up (a listing's, not a save's: a
    // rebuild reads every record) rebuilds it from the records.
    if (!(await this.index.markStale())) return false
    this.missed = false
    return true
  }

  failed(error: unknown) {
    this.offUntil = Date.now() + INDEX_RETRY_MS
    this.missed = true
    void this.index.markStale()
    const why = error instanceof Error ? error.message : String(error)
    process.stderr.write(
      `opencode-mcp-orchestrator: task index ${this.index.file} unusable (${why}); reading records\n`,
    )
  }
}

interface StoreView extends StoreSide {
  readonly index: TaskIndex
  readonly gate: IndexGate
}

export interface Page {
  records: TaskRecord[]
  total: number
}

const matches = (record: TaskRecord, query: IndexQuery, finished: (status: string) => boolean) =>
  (!query.status || record.status === query.status) &&
  (!query.unfinished || !finished(record.status)) &&
  (!query.inside || placeOf(record) === query.inside || placeOf(record).startsWith(`${query.inside}/`))

const newestFirst = (a: TaskRecord, b: TaskRecord) => b.createdAt.localeCompare(a.createdAt)

async function viaIndex<T>(view: StoreView, slow: () => Promise<T>, fast: () => Promise<T>): Promise<T> {
  if (!(await view.gate.usable())) return slow()
  try {
    await view.index.catchUp()
    return await fast()
  } catch (error) {
    view.gate.failed(error)
    return slow()
  }
}

/**
 * Reads the rows' records. The read itself (TaskStore.read) repairs a row that says otherwise than its
 * record and drops one whose record is gone; the file is the truth, whatever its dates say.
 */
async function readRows(view: StoreView, rows: IndexRow[]): Promise<TaskRecord[]> {
  const records = await Promise.all(rows.map((row) => view.read(row.id)))
  return records.filter((record): record is TaskRecord => record !== undefined)
}

/** The records matching `query`, newest first, at most `limit`, and how many match in all. */
function page(view: StoreView, query: IndexQuery): Promise<Page> {
  const slow = async () => {
    const all = (await view.scan()).filter((record) => matches(record, query, view.finished))
    return { records: query.limit === undefined ? all : all.slice(0, query.limit), total: all.length }
  }
  return viaIndex(view, slow, async () => {
    const held = view.held()
    if (held.length === 0) {
      const { rows, total } = await view.index.rows(query)
      const records = (await readRows(view, rows)).filter((record) => matches(record, query, view.finished))
      return { records, total: total - (rows.length - records.length) }
    }
    // A record held in memory may match where its row does not (or the reverse): merge them by id.
    const { rows } = await view.index.rows({ ...query, limit: undefined })
    const heldIds = new Set(held.map((record) => record.id))
    const kept = held.filter((record) => matches(record, query, view.finished))
    const others = rows.filter((row) => !heldIds.has(row.id))
    const limit = query.limit ?? Number.POSITIVE_INFINITY
    const records = [...kept, ...(await readRows(view, others.slice(0, limit)))]
      .filter((record) => matches(record, query, view.finished))
      .sort(newestFirst)
    return { records: records.slice(0, limit), total: kept.length + others.length }
  })
}

/** The task started under idempotency key `key`, if any. */
function byKey(view: StoreView, key: string): Promise<TaskRecord | undefined> {
  const slow = async () => (await view.scan()).find((record) => record.idempotencyKey === key)
  return viaIndex(view, slow, async () => {
    const held = view.held().find((record) => record.idempotencyKey === key)
    if (held) return held
    for (const id of await view.index.byKey(key)) {
      const record = await view.read(id)
      if (record?.idempotencyKey === key) return record
    }
    return undefined
  })
}

/**
 * Rows read again from their records (set aside in turn if those are garbage too), each row set from
 * its record or dropped by the read: the records read.
 */
async function reread(view: StoreView, ids: string[]): Promise<Map<string, TaskRecord>> {
  const read = new Map<string, TaskRecord>()
  for (const id of ids) {
    const record = await view.read(id)
    if (record) read.set(id, record)
  }
  return read
}

/** What the ledger sums: every finished record's numbers, from the index rows (no record file is read). */
function ledger(view: StoreView): Promise<LedgerRecord[]> {
  const slow = async () => view.scan()
  return viaIndex<LedgerRecord[]>(view, slow, async () => {
    const { rows, bad } = await view.index.ledger()
    for (const [id, record] of await reread(view, bad)) rows.set(id, record)
    for (const record of view.held()) rows.set(record.id, record)
    return [...rows.values()]
  })
}

/** Passes over the cells at most, each after reading again the rows the last one could not use. */
const STATS_PASSES = 3

/** The ledger of tasks finished at or after `since`, from the index's cells (no record file is read). */
function stats(view: StoreView, since?: number): Promise<Stats> {
  const slow = async () => summarize(await view.scan(), since)
  return viaIndex(view, slow, async () => {
    let found = await view.index.cells(since)
    for (let pass = 1; found.unread.length && pass < STATS_PASSES; pass++) {
      await reread(view, found.unread)
      found = await view.index.cells(since)
    }
    // A record held in memory (its write failed) counts as held, not as its row says.
    const start = since === undefined ? "" : new Date(since).toISOString()
    const inPeriod = (record: LedgerRecord) => doneOf(record) >= start
    for (const record of view.held()) {
      const row = await view.index.entry(record.id)
      if (row && inPeriod(row)) addRecord(found.cells, row, -1)
      if (inPeriod(record)) addRecord(found.cells, record)
    }
    return statsOf(found.cells, since)
  })
}

/** The store's indexed listings (TaskStore delegates to these). */
export class TaskViews {
  readonly gate: IndexGate
  private readonly view: StoreView

  constructor(index: TaskIndex, side: StoreSide) {
    this.gate = new IndexGate(index)
    this.view = { ...side, index, gate: this.gate }
  }

  get index() {
    return this.view.index
  }

  page(query: IndexQuery): Promise<Page> {
    return page(this.view, query)
  }

  byKey(key: string): Promise<TaskRecord | undefined> {
    return byKey(this.view, key)
  }

  ledger(): Promise<LedgerRecord[]> {
    return ledger(this.view)
  }

  stats(since?: number): Promise<Stats> {
    return stats(this.view, since)
  }
}
