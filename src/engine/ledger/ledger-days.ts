// The ledger kept as tasks finish (ledger-table.ts stores it): each finished task adds its shares
// (ledger.ts) to one cell per UTC day and (role, model), and to the day's total, so stats reads a few
// cells per day rather than a row per task. Durations are counted in buckets 2% wide, so a median read
// from them is within 1% of the exact one. Pure: a record's contributions, the cells' sums, Stats out.
import {
  isCounted,
  type LedgerRecord,
  rowOrder,
  type Share,
  sharesOf,
  type Stats,
  type StatsRow,
  totalOf,
} from "./ledger"
import type { Tokens } from "../records"

/** The total's role and model: no real role or model is empty. */
const TOTAL = ""
/** Each duration bucket is this much wider than the one before; its middle is within 1% of what it holds. */
const GROWTH = 1.02
const TOKEN_KEYS = ["input", "output", "reasoning", "cacheRead", "cacheWrite"] as const

/** Bucket 0 holds durations under 1 ms; bucket b ≥ 1 holds [GROWTH^(b-1), GROWTH^b). */
const bucketOf = (ms: number) => (ms < 1 ? 0 : 1 + Math.floor(Math.log(ms) / Math.log(GROWTH)))
/** The geometric middle of a bucket, what the median reports for a duration in it. */
const bucketMiddle = (bucket: number) => (bucket === 0 ? 0 : Math.round(GROWTH ** (bucket - 0.5)))

/** When a counted record finished, as an ISO time ('' when its date does not parse: before any period). */
export function doneOf(record: LedgerRecord): string {
  const at = Date.parse(record.finishedAt ?? record.updatedAt)
  return Number.isNaN(at) ? "" : new Date(at).toISOString()
}

export interface Contribution {
  role: string
  model: string
  share: Share
}

/** What a record adds to the cells of its day: each route's share, and the task in the total. */
export function contributions(record: LedgerRecord): Contribution[] {
  if (!isCounted(record)) return []
  const shares = sharesOf(record).map(({ model, share }) => ({ role: record.role, model, share }))
  // The total counts each task once, with all it spent (as summarize does).
  const final = shares.at(-1)!.share
  return [...shares, { role: TOTAL, model: TOTAL, share: { ...final, ...totalOf(record) } }]
}

export interface Cell {
  tasks: number
  succeeded: number
  tokens: Tokens
  cost: number
  steps: number
  keptOut: number
  returned: number
  /** Durations per bucket. */
  durations: Map<number, number>
}

export const emptyCell = (): Cell => ({
  tasks: 0,
  succeeded: 0,
  tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  cost: 0,
  steps: 0,
  keptOut: 0,
  returned: 0,
  durations: new Map(),
})

/** Cells by role and model. */
export type Cells = Map<string, Cell>

export const cellKey = (role: string, model: string) => `${role}\u0000${model}`

function cellOf(cells: Cells, role: string, model: string): Cell {
  const key = cellKey(role, model)
  const found = cells.get(key)
  if (found) return found
  const cell = emptyCell()
  cells.set(key, cell)
  return cell
}

/** Adds (sign 1) or takes away (sign -1) one share, or cell, into `cell`. */
function addInto(cell: Cell, other: Cell, sign: 1 | -1 = 1) {
  cell.tasks += sign * other.tasks
  cell.succeeded += sign * other.succeeded
  for (const key of TOKEN_KEYS) cell.tokens[key] += sign * other.tokens[key]
  cell.cost += sign * other.cost
  cell.steps += sign * other.steps
  cell.keptOut += sign * other.keptOut
  cell.returned += sign * other.returned
  for (const [bucket, n] of other.durations) cell.durations.set(bucket, (cell.durations.get(bucket) ?? 0) + sign * n)
}

/** One share as a cell of one task. */
export function shareCell(share: Share): Cell {
  const durations = new Map<number, number>()
  if (share.durationMs !== undefined) durations.set(bucketOf(share.durationMs), 1)
  const { tokens, cost, steps, keptOut, returned } = share
  return { tasks: 1, succeeded: share.succeeded ? 1 : 0, tokens, cost, steps, keptOut, returned, durations }
}

/** Adds (or takes away) a record's contributions into `cells`. */
export function addRecord(cells: Cells, record: LedgerRecord, sign: 1 | -1 = 1) {
  for (const { role, model, share } of contributions(record))
    addInto(cellOf(cells, role, model), shareCell(share), sign)
}

function medianOf(durations: Map<number, number>): number {
  const buckets = [...durations.entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0])
  const count = buckets.reduce((sum, [, n]) => sum + n, 0)
  if (!count) return 0
  // The value at position `at` (0-based) in the sorted durations.
  const at = (position: number) => {
    let seen = 0
    for (const [bucket, n] of buckets) {
      seen += n
      if (seen > position) return bucketMiddle(bucket)
    }
    return bucketMiddle(buckets.at(-1)![0])
  }
  const middle = count >> 1
  return count % 2 ? at(middle) : Math.round((at(middle - 1) + at(middle)) / 2)
}

function statsRow(role: string, model: string, cell: Cell): StatsRow {
  return {
    role,
    model,
    tasks: cell.tasks,
    succeeded: cell.succeeded,
    successRate: cell.tasks ? cell.succeeded / cell.tasks : 0,
    tokens: { ...cell.tokens },
    cost: cell.cost,
    steps: cell.steps,
    bytesKeptOut: cell.keptOut,
    bytesReturned: cell.returned,
    medianDurationMs: medianOf(cell.durations),
  }
}

/** The ledger out of summed cells, shaped and ordered as summarize's. */
export function statsOf(cells: Cells, since?: number): Stats {
  const rows: StatsRow[] = []
  for (const [key, cell] of cells) {
    const [role, model] = key.split("\u0000") as [string, string]
    if (role !== TOTAL && cell.tasks > 0) rows.push(statsRow(role, model, cell))
  }
  return {
    ...(since !== undefined && { since: new Date(since).toISOString() }),
    rows: rows.sort(rowOrder),
    total: statsRow("all", "all", cells.get(cellKey(TOTAL, TOTAL)) ?? emptyCell()),
  }
}
