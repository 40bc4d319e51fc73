// The task store: one JSON record per delegation under the state dir, written before its session
// starts and rewritten (atomically) on every change, so a restarted MCP server, another MCP server
// process or a person with `cat` can see every task that was ever started and how it ended. The
// index beside the records (sqlite-index.ts) answers listings; the records stay the truth.
import { readdir, rm } from "node:fs/promises"
import { writeJson } from "../../util/fs"
import { sameProcess } from "../../util/process"
import { readState, type SetAside } from "../../util/state-file"
import type { Stats, IndexQuery, LedgerRecord } from "../ledger"
import { RecordSchema, checkTaskId, isFinished, type Status, TASK_ID, type TaskRecord } from "../records"
import { identityOf, type Loaded, TaskIndex } from "./sqlite-index"
import { type Page, TaskViews } from "./views"

const CORRUPT_FIX =
  "The task it held (if any) is no longer listed; inspect the moved file, and delete it once you no longer need it."

/** How an update lands (TaskStore.update). */
export interface UpdateHow {
  /** Wakes no waiter: the revision stays (spending counted, liveness). */
  quiet?: boolean
  /** Kept in memory and written with the next update or save (with `quiet`: liveness, spending). */
  deferred?: boolean
}

/** Record files read at once by a full listing. */
const READ_BATCH = 256

const isRecordName = (name: string) => name.endsWith(".json") && TASK_ID.test(name.slice(0, -5))

export class TaskStore {
  /** Per-task write chain: writes land in order, and a burst of progress collapses into the latest state. */
  private writes = new Map<string, { running: Promise<void>; pending?: TaskRecord }>()
  /**
   * The latest state of each record that could not be written (a full disk): this process answers from
   * it, and writes it again every few seconds until it lands, so no outcome is lost to a full disk.
   */
  private unsaved = new Map<string, TaskRecord>()
  private retry?: ReturnType<typeof setInterval>
  private readonly unreported: SetAside[] = []

  /** Listings through the records' index (sqlite-index.ts, views.ts); a failed index means a full scan. */
  readonly views: TaskViews

  constructor(readonly dir: string) {
    const finished = (status: string) => isFinished(status as Status)
    const index = new TaskIndex(dir, finished, (id) => this.load(id), isRecordName)
    const held = () => [...this.unsaved.values()].map((record) => structuredClone(record))
    this.views = new TaskViews(index, { read: (id) => this.read(id), scan: () => this.list(), held, finished })
  }

  file(id: string) {
    checkTaskId(id)
    return `${this.dir}/${id}.json`
  }

  /**
   * The record as its file holds it (or as this process holds it, newer than a write that failed). The
   * record is the truth: a read that finds its row missing or saying otherwise repairs the row, and a
   * record gone (or set aside) takes its row with it, so no listing or sum goes on trusting it.
   */
  async read(id: string): Promise<TaskRecord | undefined> {
    const kept = this.unsaved.get(id)
    if (kept) return structuredClone(kept)
    const { record, seen } = await this.load(id)
    // The index's trouble is never the read's: a repair it cannot make is made by the next check.
    if (await this.views.gate.usable().catch(() => false))
      await (record && seen ? this.views.index.confirm(record, seen) : this.views.index.confirmGone(id)).catch(
        (error: unknown) => this.views.gate.failed(error),
      )
    return record
  }

  /** The record file of `id` read through its schema, with the file's identity as stat saw it before the read. */
  private async load(id: string): Promise<Loaded> {
    const path = this.file(id)
    const named = (record: { id: string }) =>
      record.id === id ? undefined : `its id ${JSON.stringify(record.id)} is not its file name's ${id}`
    const seen = identityOf(path)
    const { value, setAside } = await readState(path, RecordSchema, CORRUPT_FIX, named)
    // Bounded: a process nobody lists from keeps the newest (each was also logged when set aside).
    if (setAside && this.unreported.push(setAside) > 50) this.unreported.shift()
    return { record: value as TaskRecord | undefined, seen }
  }

  /**
   * The records this store set aside since the last call, each returned once: a listing (task_list,
   * stats) reports them, whichever read found them (a task_status, the recovery sweep, a listing).
   */
  takeSetAside(): SetAside[] {
    return this.unreported.splice(0)
  }

  /** Writes now and resolves once this state (or a newer one) is on disk. */
  save(record: TaskRecord): Promise<void> {
    record.updatedAt = new Date().toISOString()
    const snapshot = structuredClone(record)
    const slot = this.writes.get(record.id)
    if (slot) {
      slot.pending = snapshot
      return slot.running
    }
    const entry: { running: Promise<void>; pending?: TaskRecord } = { running: Promise.resolve() }
    entry.running = (async () => {
      let next: TaskRecord | undefined = snapshot
      try {
        while (next) {
          const landing = next
          const intent = await this.views.gate.indexed((index) => index.intend(landing.id))
          await writeJson(this.file(next.id), next, 0o600).catch(async (error: unknown) => {
            // Nothing changed on disk (the write is atomic): the intent is void.
            if (intent !== undefined) await this.views.gate.indexed((index) => index.forget(intent))
            throw error
          })
          this.unsaved.delete(next.id)
          // The file as it landed: the row is set only while it is still that file (sqlite-index.ts put).
          const seen = identityOf(this.file(landing.id))
          await this.views.gate.indexed((index) => index.put(landing, { seen, intent }))
          next = entry.pending
          entry.pending = undefined
        }
      } catch (error) {
        this.keep(entry.pending ?? next!)
        throw error
      } finally {
        // A failed write (disk full, permissions) must not wedge every later save of this task.
        this.writes.delete(record.id)
      }
    })()
    this.writes.set(record.id, entry)
    return entry.running
  }

  /**
   * The one way a record changes: `edit` is applied to `record` itself (the object this process
   * follows and answers from), then the revision is bumped, the time stamped and the record saved, so
   * what the engine holds and what is written never differ by an edit. `quiet`: no waiter wakes for it
   * (spending counted), the revision stays. `deferred`: liveness that changes on every event, kept in
   * memory and written with the next update.
   */
  update(record: TaskRecord, edit: (record: TaskRecord) => unknown, how: UpdateHow = {}): Promise<void> {
    edit(record)
    if (!how.quiet) record.revision++
    record.updatedAt = new Date().toISOString()
    return how.deferred ? Promise.resolve() : this.save(record)
  }

  /** Resolves once every record this process could not write has been written, or after `ms`. */
  async flushed(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms
    while (this.unsaved.size > 0 && Date.now() < deadline) await Bun.sleep(250)
    return this.unsaved.size === 0
  }

  private keep(record: TaskRecord) {
    this.unsaved.set(record.id, record)
    this.retry ??= setInterval(() => {
      if (this.unsaved.size === 0) {
        clearInterval(this.retry)
        this.retry = undefined
        return
      }
      // Still failing is expected until there is room; each failure keeps the state for the next try.
      for (const kept of this.unsaved.values())
        if (!this.writes.has(kept.id)) void this.save(structuredClone(kept)).catch(() => undefined)
    }, 2000)
  }

  /** Every record, each file read: for readers that need them all (retention, doctor, the sessions listing). */
  async list(): Promise<TaskRecord[]> {
    // No tasks directory yet: no tasks.
    const names = await readdir(this.dir).catch(() => [] as string[])
    const ids = new Set(names.filter(isRecordName).map((name) => name.slice(0, -5)))
    for (const id of this.unsaved.keys()) ids.add(id)
    // A few hundred files open at a time: all at once, 100,000 records ran out of descriptors (EMFILE).
    const all = [...ids]
    const records: (TaskRecord | undefined)[] = []
    for (let at = 0; at < all.length; at += READ_BATCH)
      records.push(...(await Promise.all(all.slice(at, at + READ_BATCH).map((id) => this.read(id)))))
    return records
      .filter((record): record is TaskRecord => record !== undefined)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
  }

  async findByKey(key: string): Promise<TaskRecord | undefined> {
    return this.views.byKey(key)
  }

  /** The records matching `query`, newest first, read through the index: the files of the page only. */
  page(query: IndexQuery): Promise<Page> {
    return this.views.page(query)
  }

  /** Tasks not finished (what recovery and the lane audit look at), read through the index. */
  async unfinished(): Promise<TaskRecord[]> {
    return (await this.views.page({ unfinished: true })).records
  }

  /** What the ledger sums, from the index rows. */
  ledger(): Promise<LedgerRecord[]> {
    return this.views.ledger()
  }

  /** What the ledger reports for tasks finished at or after `since`, from the index's cells. */
  stats(since?: number): Promise<Stats> {
    return this.views.stats(since)
  }

  /** When each record's file was last written on this machine (epoch ms, by id): retention ages by it. */
  writtenAt(ids: string[]): Map<string, number> {
    const at = new Map<string, number>()
    for (const id of ids) {
      const seen = identityOf(this.file(id))
      if (seen) at.set(id, Number(seen.mtimeNs / 1_000_000n))
    }
    return at
  }

  /**
   * Removes a record (retention): its file, then its row; the ledger keeps counting it. The row is set
   * from the record first: a removal between a record's last write and its row's (under load) would
   * otherwise move the row's older numbers to the ledger, and stats would count one task fewer.
   */
  async remove(id: string): Promise<void> {
    await this.read(id)
    const intent = await this.views.gate.indexed((index) => index.intend(id, true))
    await rm(this.file(id), { force: true })
    await this.views.gate.indexed((index) => index.drop(id, intent, true))
  }
}

/** A slot's or ticket's live holder holds while its task is unfinished and followed by it, or by nobody alive. */
export async function taskFollowed(store: TaskStore, holder: { taskID: string; ownerPid: number }): Promise<boolean> {
  if (!TASK_ID.test(holder.taskID)) return false
  const record = await store.read(holder.taskID)
  if (!record || isFinished(record.status)) return false
  return record.ownerPid === holder.ownerPid || !sameProcess(record.ownerPid, record.ownerStart)
}
