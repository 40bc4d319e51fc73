// What a task record puts in its index row (sqlite-index.ts) besides the columns it is looked up by:
// the numbers the ledger sums (so stats reads no record file), and how such a row is read back,
// refusing one that does not hold what summarize adds up (it is then read again from its record); and
// which rows a listing's query selects.
import { doneOf } from "./ledger-days"
import type { LedgerRecord } from "./ledger"
import { FallbackSchema, roleLabel, type TaskRecord } from "../records"

export interface IndexQuery {
  status?: string
  /** Records whose workspace (an isolated worker's source) is this directory or lies under it. */
  inside?: string
  limit?: number
  unfinished?: boolean
}

/** The rows `query` selects, as a WHERE clause (empty for every row) and its arguments. Pure. */
export function selection(query: IndexQuery): { clause: string; args: (string | number)[] } {
  const where: string[] = []
  const args: (string | number)[] = []
  if (query.status) {
    where.push("status = ?")
    args.push(query.status)
  }
  if (query.unfinished) where.push("finished = 0")
  if (query.inside) {
    // The directory itself, or a path under it: a range, so the place index answers it.
    where.push("(place = ? OR (place >= ? AND place < ?))")
    args.push(query.inside, `${query.inside}/`, `${query.inside}0`)
  }
  return { clause: where.length ? `WHERE ${where.join(" AND ")}` : "", args }
}

/**
 * A record's row, set to the record as its file now holds it. Never ordered by the record's own dates: a
 * record dated in the future (a clock set back, a file restored) would keep its row for ever. The
 * caller has checked the file is the one the row describes (TaskIndex `put`, its stamp).
 */
export const UPSERT_ROW = `INSERT INTO tasks
  (id, created, updated, revision, status, finished, place, key, ledger, done, stamp)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET created = excluded.created,
  updated = excluded.updated, (revision, status) = (excluded.revision, excluded.status),
  finished = excluded.finished, place = excluded.place, key = excluded.key, ledger = excluded.ledger,
  done = excluded.done, stamp = excluded.stamp`

/** The columns a row derives from its record, as stored; `stamp` says which file and which values they are. */
export interface RowColumns {
  id: string
  created: string
  updated: string
  revision: number
  status: string
  finished: number
  place: string
  key: string | null
  ledger: string
  done: string | null
  stamp: string | null
}

/** The columns rowOf fills, in UPSERT_ROW's order (the stamp last). */
const DERIVED = [
  "id",
  "created",
  "updated",
  "revision",
  "status",
  "finished",
  "place",
  "key",
  "ledger",
  "done",
] as const

/** A short digest of a row's derived columns: a row edited (or half-written) since is told by it. Pure. */
const digestOf = (values: readonly (string | number | null)[]) => Bun.hash(JSON.stringify(values)).toString(36)

/**
 * Which record file a row was made from, and of what: the file's inode, size, modification and change
 * times (every save replaces the file by rename, so a new save is a new inode; an edit in place moves the
 * times), and the digest of the row's own columns. A row whose stamp differs from its file and
 * columns is read again from its record. Pure.
 */
export const stampOf = (file: FileIdentity, values: readonly (string | number | null)[]) =>
  `${file.ino}:${file.size}:${file.mtimeNs}:${file.ctimeNs}#${digestOf(values)}`

export interface FileIdentity {
  ino: bigint
  size: bigint
  mtimeNs: bigint
  ctimeNs: bigint
}

/** True when `row` is what its record file (`file`, as stat saw it now) gives, as far as the stamp tells. Pure. */
export function stampHolds(row: RowColumns, file: FileIdentity): boolean {
  return (
    row.stamp ===
    stampOf(
      file,
      DERIVED.map((column) => row[column]),
    )
  )
}

/** UPSERT_ROW's values for `record` (stamped for `file`, or unstamped: read again by the next check). */
export function rowOf(record: TaskRecord, finished: boolean, file?: FileIdentity) {
  const entry = ledgerOf(record)
  const values: (string | number | null)[] = [
    record.id,
    record.createdAt,
    record.updatedAt,
    record.revision,
    record.status,
    finished ? 1 : 0,
  ]
  values.push(placeOf(record), record.idempotencyKey ?? null, JSON.stringify(entry), finished ? doneOf(entry) : null)
  values.push(file ? stampOf(file, values) : null)
  return { values, entry }
}

/** True when `row` holds other columns than `record` gives it (the stamp aside). Pure. */
export function rowDiffers(row: RowColumns, record: TaskRecord, finished: boolean): boolean {
  const { values } = rowOf(record, finished)
  return DERIVED.some((column, at) => row[column] !== values[at])
}

/** Where a listed record was asked for: an isolated worker is listed under its source workspace. */
export const placeOf = (record: TaskRecord) => record.isolation?.source ?? record.workspace

export const ledgerOf = (record: TaskRecord): LedgerRecord => {
  const { status, route, finishedAt, updatedAt, result, fallbackFrom } = record
  const kept = result && {
    model: result.model,
    tokens: result.tokens,
    cost: result.cost,
    steps: result.steps,
    bytes: result.bytes,
    durationMs: result.durationMs,
  }
  // A role the person defined counts on a row of its own, named after the tool that ran it.
  return {
    role: roleLabel(record),
    status,
    route,
    finishedAt,
    updatedAt,
    result: kept,
    ...(fallbackFrom && { fallbackFrom }),
  }
}

const isCount = (value: unknown) => typeof value === "number" && Number.isFinite(value) && value >= 0

/** A row's ledger numbers, or undefined when the row does not hold what summarize adds up. */
export function ledgerRow(text: string): LedgerRecord | undefined {
  try {
    const entry = JSON.parse(text) as LedgerRecord
    if (typeof entry?.role !== "string" || typeof entry.status !== "string") return undefined
    // The routes a task left are summed too (per model): a row whose list does not hold is re-read.
    if (entry.fallbackFrom !== undefined && !FallbackSchema.array().safeParse(entry.fallbackFrom).success)
      return undefined
    const result = entry.result
    if (result === undefined) return entry
    const numbers = [result.cost, result.steps, result.durationMs, ...Object.values(result.tokens ?? {})]
    return numbers.length === 8 && numbers.every(isCount) ? entry : undefined
    // A ledger cell that does not parse is garbage: the row is re-read from its record.
  } catch {
    return undefined
  }
}
