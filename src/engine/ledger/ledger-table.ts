// The ledger's cells (ledger-days.ts) in the task index's database, kept in the same transaction as the
// row that changes them: a row's old numbers are taken away and its new ones added, so the cells of
// kind 'kept' are always the sum of the rows. A record retention removes moves its numbers to kind
// 'pruned', so the ledger still counts it (by its whole UTC day). Cells an index never had (an index
// from before them) or whose sum is in doubt (a row garbled in place) are summed again from the rows,
// once; a garbled row is marked '' (it added nothing) and read again from its record.
import type { Database } from "bun:sqlite"
import { addRecord, type Cells, cellKey, contributions, doneOf, emptyCell, shareCell } from "./ledger-days"
import { ledgerRow } from "./index-rows"
import type { LedgerRecord } from "./ledger"

export const LEDGER_TABLES = `CREATE TABLE IF NOT EXISTS ledger_cells (kind TEXT NOT NULL, day TEXT NOT NULL,
    role TEXT NOT NULL, model TEXT NOT NULL, tasks, succeeded, input, output, reasoning, cache_read, cache_write,
    cost, steps, kept_out, returned, PRIMARY KEY (kind, day, role, model)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS ledger_durations (kind TEXT NOT NULL, day TEXT NOT NULL, role TEXT NOT NULL,
    model TEXT NOT NULL, bucket INTEGER NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (kind, day, role, model, bucket)) WITHOUT ROWID;`

const ALL_SUMS = ["tasks", "succeeded", "input", "output", "reasoning", "cache_read", "cache_write"].concat([
  "cost",
  "steps",
  "kept_out",
  "returned",
])
const ADD_CELL = `INSERT INTO ledger_cells VALUES (?, ?, ?, ?, ${ALL_SUMS.map(() => "?").join(", ")})
  ON CONFLICT DO UPDATE SET ${ALL_SUMS.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")}`
const ADD_DURATION = `INSERT INTO ledger_durations VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT DO UPDATE SET n = n + excluded.n`
const KEY = "kind = ? AND day = ? AND role = ? AND model = ?"

type Kind = "kept" | "pruned"

/** Adds (or takes away) a record's numbers in the cells of its day. Inside the caller's transaction. */
function apply(db: Database, kind: Kind, record: LedgerRecord, sign: 1 | -1) {
  const day = doneOf(record).slice(0, 10)
  for (const { role, model, share } of contributions(record)) {
    const cell = shareCell(share)
    const t = cell.tokens
    const sums = [cell.tasks, cell.succeeded, t.input, t.output, t.reasoning, t.cacheRead, t.cacheWrite]
    const values = [...sums, cell.cost, cell.steps, cell.keptOut, cell.returned].map((value) => sign * value)
    db.query(ADD_CELL).run(kind, day, role, model, ...values)
    // A cell whose tasks all left is removed, rounding left in its sums with it.
    db.query(`DELETE FROM ledger_cells WHERE ${KEY} AND tasks <= 0`).run(kind, day, role, model)
    for (const [bucket, n] of cell.durations) {
      db.query(ADD_DURATION).run(kind, day, role, model, bucket, sign * n)
      db.query(`DELETE FROM ledger_durations WHERE ${KEY} AND bucket = ? AND n <= 0`).run(
        kind,
        day,
        role,
        model,
        bucket,
      )
    }
  }
}

const summed = (db: Database) => db.query("SELECT 1 FROM meta WHERE key = 'ledger'").get() !== null

/**
 * A row changed from `before` (its ledger cell, null when there was no row) to `after` (undefined: the
 * row is gone; `pruned`: retention removed its record). Inside the caller's transaction.
 */
export function rowChanged(db: Database, before: string | null, after?: LedgerRecord, pruned = false) {
  const old = before === null || before === "" ? undefined : ledgerRow(before)
  // Garbled in place (what it added is unknown), or never summed: summed now from the rows, this one's new state
  // among them; a pruned record's numbers move to the pruned cells all the same.
  if (!summed(db) || (before !== null && before !== "" && !old)) {
    sumRows(db)
    if (pruned && old) apply(db, "pruned", old, 1)
    return
  }
  if (old) apply(db, "kept", old, -1)
  if (old && pruned) apply(db, "pruned", old, 1)
  if (after) apply(db, "kept", after, 1)
}

const TALLY_BATCH = 1000

/** The kept cells summed again from every row (and each row's finish time set), in one transaction. */
export function tally(db: Database) {
  db.transaction(() => {
    if (!summed(db)) sumRows(db) // else another process summed them meanwhile
  }).immediate()
}

/** tally's work, inside the caller's transaction. */
function sumRows(db: Database) {
  db.query("DELETE FROM ledger_cells WHERE kind = 'kept'").run()
  db.query("DELETE FROM ledger_durations WHERE kind = 'kept'").run()
  const page = db.query("SELECT id, ledger FROM tasks WHERE finished = 1 AND id > ? ORDER BY id LIMIT ?")
  for (let last = ""; ; ) {
    const rows = page.all(last, TALLY_BATCH) as { id: string; ledger: string }[]
    if (!rows.length) break
    for (const { id, ledger } of rows) {
      const entry = ledgerRow(ledger)
      if (entry) apply(db, "kept", entry, 1)
      // Garbled: marked as adding nothing, and read again from its record by the next stats.
      if (entry) db.query("UPDATE tasks SET done = ? WHERE id = ?").run(doneOf(entry), id)
      else db.query("UPDATE tasks SET ledger = '', done = NULL WHERE id = ?").run(id)
    }
    last = rows.at(-1)!.id
  }
  db.query("INSERT OR REPLACE INTO meta VALUES ('ledger', ?)").run(new Date().toISOString())
}

type CellRow = Record<string, number | string>

/**
 * The cells of tasks finished at or after `since` (every one when undefined), by role and model, and
 * the ids of rows to read again from their records first. Whole UTC days come from the cells, kept and
 * pruned; the part of the first day after `since` from the rows finished then (exact, kept records only).
 */
export function readCells(db: Database, since?: number): { cells: Cells; unread: string[] } {
  if (!summed(db)) tally(db)
  return db.transaction(() => {
    const unread = (db.query("SELECT id FROM tasks WHERE ledger = ''").all() as { id: string }[]).map((r) => r.id)
    const start = since === undefined ? "" : new Date(since).toISOString()
    const day = start.slice(0, 10)
    const whole = start === "" || start.endsWith("T00:00:00.000Z")
    const where = since === undefined ? "" : `WHERE day ${whole ? ">=" : ">"} ?`
    const args = since === undefined ? [] : [day]
    const cells: Cells = new Map()
    const sums = ALL_SUMS.map((c) => `sum(${c}) AS ${c}`).join(", ")
    const found = db.query(`SELECT role, model, ${sums} FROM ledger_cells ${where} GROUP BY role, model`)
    for (const row of found.all(...args) as CellRow[]) {
      const cell = emptyCell()
      Object.assign(cell, { tasks: row.tasks, succeeded: row.succeeded, cost: row.cost, steps: row.steps })
      Object.assign(cell, { keptOut: row.kept_out, returned: row.returned })
      const tokens = [row.input, row.output, row.reasoning, row.cache_read, row.cache_write] as number[]
      const [input, output, reasoning, cacheRead, cacheWrite] = tokens as [number, number, number, number, number]
      cell.tokens = { input, output, reasoning, cacheRead, cacheWrite }
      cells.set(cellKey(String(row.role), String(row.model)), cell)
    }
    const buckets = `SELECT role, model, bucket, sum(n) AS n FROM ledger_durations ${where}
      GROUP BY role, model, bucket`
    for (const row of db.query(buckets).all(...args) as CellRow[])
      cells.get(cellKey(String(row.role), String(row.model)))?.durations.set(Number(row.bucket), Number(row.n))
    if (!whole) {
      const next = new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString()
      const rows = db.query("SELECT id, ledger FROM tasks WHERE done >= ? AND done < ?").all(start, next)
      for (const { id, ledger } of rows as { id: string; ledger: string }[]) {
        const entry = ledgerRow(ledger)
        if (entry) addRecord(cells, entry)
        else unread.push(id)
      }
    }
    return { cells, unread }
  })()
}
