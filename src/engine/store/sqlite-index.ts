// An index of the task records (bun:sqlite, WAL) so that a listing, a key lookup, the ledger and the
// recovery pass cost what they return, not every record ever kept. The JSON records stay the truth:
// the index is derived from them, written after each record lands, and rebuilt from them when it is
// missing, garbage or not a regular file. What a crash can leave behind is caught by two cheap checks:
// an intent row written before each record changes (re-read from its file unless its writer still
// runs), and the records directory's mtime, which moves whenever a name appears or goes (a record
// written by anyone who does not keep the index: a person, an older version, a half-finished save).
import type { Database } from "bun:sqlite"
import { statSync } from "node:fs"
import { lstat, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises"
import { statIfPresent } from "../../util/fs"
import { alive } from "../../util/process"
import {
  readCells,
  rowChanged,
  type FileIdentity,
  type IndexQuery,
  ledgerRow,
  type RowColumns,
  rowDiffers,
  rowOf,
  selection,
  stampHolds,
  UPSERT_ROW,
  type LedgerRecord,
} from "../ledger"
import { openIndex, setAsideIndex } from "./sqlite-file"
import type { TaskRecord } from "../records"

/** A name change this recent may share its mtime tick with one still to come: not trusted as synced. */
const QUIET_NS = 1_000_000_000n
/** An intent older than this is re-read even when its writer's PID is alive (it may be a reused PID). */
const INTENT_STALE_MS = 60_000
const REBUILD_BATCH = 500

/** A record as read, with its file as stat saw it just before the read (undefined: absent or set aside). */
export interface Loaded {
  record?: TaskRecord
  seen?: FileIdentity
}

/** The file at `path` as stat sees it now, undefined when it is not there. */
export function identityOf(path: string): FileIdentity | undefined {
  const info = statSync(path, { bigint: true, throwIfNoEntry: false })
  return info && { ino: info.ino, size: info.size, mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs }
}

const sameFile = (a: FileIdentity, b: FileIdentity) =>
  a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs

/** What a reconciliation found and repaired, by task id. */
export interface Drift {
  /** Records that had no row (hidden from every listing and from stats): indexed. */
  added: string[]
  /** Rows that said otherwise than their record (a status, a ledger, a date): set to the record. */
  repaired: string[]
  /** Rows whose record is gone (counted by listings and stats though nothing is there): dropped. */
  dropped: string[]
}

interface DirTime {
  mtime: bigint
  at: bigint
}

interface Row {
  id: string
}

/** A change noted before it is made (`prune`: retention's removal). */
type Intent = { seq: number; id: string; pid: number; at: number; prune: number }

/** A listed row: enough to order it and to tell whether its record changed since it was indexed. */
export type IndexRow = RowColumns

/** The columns a listed row is read with: enough to order it and to tell it from its record. */
const ROW_COLUMNS = "id, created, updated, revision, status, finished, place, key, ledger, done, stamp"

export class TaskIndex {
  private db?: Database
  readonly dir: string
  readonly file: string
  private readonly staleMark: string
  /** Whether this process has checked every row against its record file yet (once, at its first use). */
  private reconciled = false
  private opening?: Promise<Database>

  /**
   * `finished` says which statuses are final; `load` reads one record file (through its schema,
   * setting a bad one aside) with its file's identity as seen before the read.
   */
  constructor(
    readonly recordsDir: string,
    private readonly finished: (status: string) => boolean,
    private readonly load: (id: string) => Promise<Loaded>,
    private readonly isRecordName: (name: string) => boolean,
  ) {
    this.dir = `${recordsDir}/.index`
    this.file = `${this.dir}/records.sqlite`
    this.staleMark = `${this.dir}/stale`
  }

  /** The open index, built from the records first when it is new; a garbage file is set aside and rebuilt. */
  async ready(): Promise<Database> {
    if (this.db) return this.db
    // One opening at a time: reads that each check their row (TaskStore.read) all ask at once.
    this.opening ??= this.openFirst().finally(() => (this.opening = undefined))
    return this.opening
  }

  private async openFirst(): Promise<Database> {
    await mkdir(this.recordsDir, { recursive: true, mode: 0o700 })
    const db = await openIndex(this.dir, this.file)
    this.db = db
    const built = db.query("SELECT value FROM meta WHERE key = 'built'").get() as { value: string } | null
    if (!built) await this.rebuild()
    return this.db ?? db
  }

  private async open(): Promise<Database> {
    return this.db ?? (await this.ready())
  }

  /**
   * Every record file read once into the index (the first start, after the index was lost, or when a
   * process's index writes failed). Rows are never emptied first: another process listing meanwhile
   * would count none of the records it saved. Each record is upserted unless its file changed since it
   * was read (its writer's row stands), then rows whose file is gone are dropped.
   */
  async rebuild(): Promise<void> {
    const db = await this.open()
    try {
      // Unmarked while it runs: an interrupted build is not marked built and starts over.
      db.query("DELETE FROM meta WHERE key = 'built'").run()
      const before = await this.dirTime()
      const names = (await readdir(this.recordsDir)).filter(this.isRecordName)
      // In batches, so a first start over 100,000 records holds a few hundred in memory, not all of them.
      for (let at = 0; at < names.length; at += REBUILD_BATCH) {
        const batch = names.slice(at, at + REBUILD_BATCH).map((name) => this.load(name.slice(0, -5)))
        const loaded = await Promise.all(batch)
        db.transaction(() => {
          for (const { record, seen } of loaded) if (record && seen) this.upsertSeen(record, seen)
        }).immediate()
      }
      await this.dropGone(new Set(names.map((name) => name.slice(0, -5))))
      db.query("INSERT OR REPLACE INTO meta VALUES ('built', ?)").run(new Date().toISOString())
      this.markSynced(before)
    } catch (error) {
      // A database that went bad while open (SQLITE_CORRUPT) is set aside and built anew.
      if (!/NOTADB|CORRUPT/.test((error as { code?: string }).code ?? "")) throw error
      this.close()
      await setAsideIndex(this.file, String((error as { code?: string }).code))
      // Not ready(): a rebuild during the first opening would wait on that opening, its own caller.
      await this.openFirst()
    }
  }

  /** Drops each row whose id is not among `names` (as listed) and whose file is not there now either. */
  private async dropGone(names: Set<string>): Promise<void> {
    for (const { id } of this.db!.query("SELECT id FROM tasks").all() as Row[]) {
      if (names.has(id)) continue
      // Written since the listing: its row is right.
      if (await lstat(`${this.recordsDir}/${id}.json`).catch(() => undefined)) continue
      await this.drop(id)
    }
  }

  /** Asks whichever process next uses the index to rebuild it (an empty file: it needs no free block). */
  async markStale(): Promise<boolean> {
    return writeFile(this.staleMark, "").then(
      () => true,
      () => false, // where even that fails, the caller asks again later
    )
  }

  /**
   * Notes that `id` is about to change, so a crash before `put` leaves the record to be re-read;
   * `prune`: retention is removing it, so a crash after its file went still keeps it in the ledger.
   */
  async intend(id: string, prune = false): Promise<number> {
    const db = await this.ready()
    const sql = "INSERT INTO intents (id, pid, at, prune) VALUES (?, ?, ?, ?)"
    return Number(db.query(sql).run(id, process.pid, Date.now(), prune ? 1 : 0).lastInsertRowid)
  }

  /**
   * The record as its file held it when stat saw `seen` (just after this process wrote it, or just before
   * it read it); `intent` is done. The row is set only while the file is still that one: a file replaced
   * since is another write, whose own put (or the next check) sets the row. Never by the record's dates.
   */
  async put(record: TaskRecord, options: { seen?: FileIdentity; intent?: number } = {}): Promise<void> {
    const db = await this.ready()
    db.transaction(() => {
      if (options.seen) this.upsertSeen(record, options.seen)
      if (options.intent !== undefined) db.query("DELETE FROM intents WHERE seq = ?").run(options.intent)
    }).immediate()
  }

  /**
   * A record just read (with its file's identity before the read), checked against its row: a row that
   * is missing or says otherwise is set from it. True when the row was repaired.
   */
  async confirm(record: TaskRecord, seen: FileIdentity): Promise<boolean> {
    const db = await this.ready()
    const row = db.query(`SELECT ${ROW_COLUMNS} FROM tasks WHERE id = ?`).get(record.id) as RowColumns | null
    if (row && stampHolds(row, seen) && !rowDiffers(row, record, this.finished(record.status))) return false
    const set = db.transaction(() => this.upsertSeen(record, seen)).immediate()
    // Only a row that said otherwise was repaired; one merely stamped anew (an older program's) was not.
    return set && (!row || rowDiffers(row, record, this.finished(record.status)))
  }

  /** The record `id` is absent (or was set aside): its row, if any, goes, unless a file came meanwhile. */
  async confirmGone(id: string): Promise<boolean> {
    await this.ready()
    if (!this.rowExists(id)) return false
    // A file there (written since the read) keeps the row; one that cannot be looked at throws.
    if (await statIfPresent(`${this.recordsDir}/${id}.json`, false)) return false
    await this.drop(id)
    return true
  }

  private rowExists(id: string): boolean {
    return this.db!.query("SELECT 1 FROM tasks WHERE id = ?").get(id) !== null
  }

  /** An intent whose change never happened (the record's write failed: the file is as it was). */
  async forget(intent: number): Promise<void> {
    ;(await this.ready()).query("DELETE FROM intents WHERE seq = ?").run(intent)
  }

  /** The record's file is gone (`pruned`: retention removed it, and the ledger keeps counting it). */
  async drop(id: string, intent?: number, pruned = false): Promise<void> {
    const db = await this.ready()
    db.transaction(() => {
      const before = this.ledgerCell(id)
      if (db.query("DELETE FROM tasks WHERE id = ?").run(id).changes) rowChanged(db, before, undefined, pruned)
      if (intent !== undefined) db.query("DELETE FROM intents WHERE seq = ?").run(intent)
    }).immediate()
  }

  private ledgerCell(id: string): string | null {
    return (
      (this.db!.query("SELECT ledger FROM tasks WHERE id = ?").get(id) as { ledger: string } | null)?.ledger ?? null
    )
  }

  /**
   * The row set to `record`, stamped with its file, the ledger's cells with it, if the file is still the
   * one `seen` (else nothing: another write replaced it). In a transaction. True when set.
   */
  private upsertSeen(record: TaskRecord, seen: FileIdentity): boolean {
    const now = identityOf(`${this.recordsDir}/${record.id}.json`)
    if (!now || !sameFile(now, seen)) return false
    const before = this.ledgerCell(record.id)
    const { values, entry } = rowOf(record, this.finished(record.status), seen)
    this.db!.query(UPSERT_ROW).run(...values)
    rowChanged(this.db!, before, entry)
    return true
  }

  /** Catches up with what the index cannot have seen: intents of writers that stopped, names that appeared. */
  async catchUp(): Promise<void> {
    const db = await this.ready()
    // Once per process, before its first listing: the rows checked against the records (reconcile).
    if (!this.reconciled) {
      this.reconciled = true
      await this.reconcile()
    }
    // A process whose index failed left this mark: what it wrote meanwhile is only in the records.
    // Taken before the rebuild, so a mark left during it asks for another.
    if (await lstat(this.staleMark).catch(() => undefined)) {
      await rm(this.staleMark, { force: true })
      await this.rebuild()
    }
    const intents = db.query("SELECT seq, id, pid, at, prune FROM intents").all() as Intent[]
    for (const intent of intents) {
      // A writer still running may be between its file and its row: its own put settles the row.
      if (alive(intent.pid) && Date.now() - intent.at < INTENT_STALE_MS) continue
      const { record, seen } = await this.load(intent.id)
      if (record) await this.put(record, { seen, intent: intent.seq })
      else await this.drop(intent.id, intent.seq, intent.prune === 1)
    }
    const synced = db.query("SELECT value FROM meta WHERE key = 'synced'").get() as { value: string } | null
    const now = await this.dirTime()
    if (synced && now !== undefined && synced.value === String(now.mtime)) return
    await this.syncNames(now)
  }

  /** Names on disk against rows: a new name is read and indexed, a row whose file is gone is dropped. */
  private async syncNames(before: DirTime | undefined): Promise<void> {
    const db = this.db!
    const names = new Set((await readdir(this.recordsDir)).filter(this.isRecordName).map((n) => n.slice(0, -5)))
    const rows = new Set((db.query("SELECT id FROM tasks").all() as Row[]).map((row) => row.id))
    for (const id of names) {
      if (rows.has(id)) continue
      const { record, seen } = await this.load(id)
      if (record) await this.put(record, { seen })
    }
    await this.dropGone(names)
    this.markSynced(before)
  }

  private markSynced(before: DirTime | undefined) {
    // Only a directory quiet for a while when it was looked at is trusted: a change landing in the
    // same (coarse) mtime tick as the last one seen would leave the mtime as it was.
    const quiet = before !== undefined && before.at - before.mtime > QUIET_NS
    if (quiet) this.db!.query("INSERT OR REPLACE INTO meta VALUES ('synced', ?)").run(String(before.mtime))
    else this.db!.query("DELETE FROM meta WHERE key = 'synced'").run()
  }

  /**
   * Every row checked against its record file, and set from the file where they disagree: a record with
   * no row is indexed, a row whose file is gone dropped, a row whose stamp is not its file's (the file
   * was replaced or edited with no put after it, or the row itself was changed) read again. A stat per
   * record; a file is read only when its stamp disagrees, or for each record when `full` (doctor).
   */
  async reconcile(options: { full?: boolean } = {}): Promise<Drift> {
    const db = await this.ready()
    const drift: Drift = { added: [], repaired: [], dropped: [] }
    const before = await this.dirTime()
    const names = (await readdir(this.recordsDir)).filter(this.isRecordName).map((name) => name.slice(0, -5))
    const rows = new Map(
      (db.query(`SELECT ${ROW_COLUMNS} FROM tasks`).all() as RowColumns[]).map((row) => [row.id, row]),
    )
    for (const id of names) {
      const row = rows.get(id)
      const file = identityOf(`${this.recordsDir}/${id}.json`)
      // Gone since the listing: dropped below if its row is still there.
      if (!file) continue
      if (row && stampHolds(row, file) && !options.full) continue
      const { record, seen } = await this.load(id)
      if (!record || !seen) continue
      if (row && stampHolds(row, seen) && !rowDiffers(row, record, this.finished(record.status))) continue
      if (!(await this.confirm(record, seen))) continue
      if (row) drift.repaired.push(id)
      else drift.added.push(id)
    }
    const present = new Set(names)
    for (const id of rows.keys()) {
      if (present.has(id)) continue
      if (await this.confirmGone(id)) drift.dropped.push(id)
    }
    // Rows that went or came without their cells (a row deleted or added by hand leaves the cells as
    // they were): the ledger's cells are summed again from the rows, now right, by the next stats.
    if (drift.added.length + drift.repaired.length + drift.dropped.length > 0)
      db.query("DELETE FROM meta WHERE key = 'ledger'").run()
    this.markSynced(before)
    return drift
  }

  /** The records directory's mtime, and when it was read (ns). */
  private async dirTime(): Promise<DirTime | undefined> {
    const at = BigInt(Date.now()) * 1_000_000n
    // No records directory yet (or not readable): no time to compare, so the index is not trusted as fresh.
    const info = await stat(this.recordsDir, { bigint: true }).catch(() => undefined)
    return info && { mtime: info.mtimeNs, at }
  }

  /** Rows matching `query`, newest first, and how many match in all. */
  async rows(query: IndexQuery): Promise<{ rows: IndexRow[]; total: number }> {
    const db = await this.ready()
    const { clause, args } = selection(query)
    const limit = query.limit === undefined ? "" : `LIMIT ${Math.max(0, Math.floor(query.limit))}`
    const sql = `SELECT ${ROW_COLUMNS} FROM tasks ${clause} ORDER BY created DESC ${limit}`
    // One read transaction: the count and the page see the same snapshot, whatever another process
    // writes between them (else a page could hold more rows than its total).
    return db.transaction(() => ({
      total: this.count(db, query, clause, args),
      rows: db.query(sql).all(...args) as IndexRow[],
    }))()
  }

  private count(db: Database, query: IndexQuery, clause: string, args: (string | number)[]): number {
    // Unfiltered, or by status alone: the trigger-kept counts. Otherwise the matching index range.
    if (!query.inside && !query.unfinished) {
      const sql = `SELECT coalesce(sum(n), 0) AS n FROM counts ${query.status ? "WHERE status = ?" : ""}`
      return (db.query(sql).get(...args) as { n: number }).n
    }
    return (db.query(`SELECT count(*) AS n FROM tasks ${clause}`).get(...args) as { n: number }).n
  }

  /** Ids of records carrying idempotency key `key`. */
  async byKey(key: string): Promise<string[]> {
    const db = await this.ready()
    return (db.query("SELECT id FROM tasks WHERE key = ? ORDER BY created").all(key) as Row[]).map((row) => row.id)
  }

  /** What the ledger needs of every finished record, by id, and the ids whose row is garbage (read their files). */
  async ledger(): Promise<{ rows: Map<string, LedgerRecord>; bad: string[] }> {
    const db = await this.ready()
    const found = db.query("SELECT id, ledger FROM tasks WHERE finished = 1").all() as { id: string; ledger: string }[]
    const rows = new Map<string, LedgerRecord>()
    const bad: string[] = []
    for (const row of found) {
      const entry = ledgerRow(row.ledger)
      if (entry) rows.set(row.id, entry)
      else bad.push(row.id)
    }
    return { rows, bad }
  }

  /** The ledger numbers of `id`'s row, undefined when it has none (or a garbage one). */
  async entry(id: string): Promise<LedgerRecord | undefined> {
    await this.ready()
    const cell = this.ledgerCell(id)
    return cell === null ? undefined : ledgerRow(cell)
  }

  /** The ledger's cells for tasks finished at or after `since`, and rows to read again from their records. */
  async cells(since?: number) {
    return readCells(await this.ready(), since)
  }

  close() {
    this.db?.close()
    this.db = undefined
  }
}
