// The savings ledger: what delegation did and cost, per role and model over a period, summed from
// the finished task records. Pure: records in, rows out; `stats` (MCP tool and CLI) reads the store
// and prints what this returns.
import { fail } from "../../errors"
import { formatModel } from "../../opencode/session"
import { answeredSpend, type Tokens, isFinished, type TaskRecord } from "../records"

export interface StatsRow {
  role: string
  model: string
  tasks: number
  succeeded: number
  /** succeeded / tasks, 0 to 1. */
  successRate: number
  tokens: Tokens
  cost: number
  steps: number
  bytesKeptOut: number
  /** What the parent's model received of the results (their structured content). */
  bytesReturned: number
  medianDurationMs: number
}

export interface Stats {
  /** ISO time the period starts at, when one was asked for. */
  since?: string
  rows: StatsRow[]
  total: StatsRow
}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** `30m`, `24h`, `7d`, `2w`, or a date/time Date.parse reads; epoch ms. */
export function parseSince(since: string, now: number): number {
  const relative = since.trim().match(/^(\d+)\s*([mhdw])$/)
  if (relative) return now - Number(relative[1]) * UNITS[relative[2]!]!
  const absolute = Date.parse(since)
  if (Number.isNaN(absolute))
    throw fail(
      "Usage",
      `since "${since.slice(0, 40)}" is neither a duration nor a date.`,
      "Write a duration such as 24h, 7d or 2w, or a date such as 2026-11-01.",
    )
  return absolute
}

const zero = (): Tokens => ({ input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 })

function median(values: number[]): number {
  if (!values.length) return 0
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2)
}

/** The model that answered, else the one asked for, else the role's default. */
const modelOf = (record: LedgerRecord) =>
  record.result?.model ?? (record.route ? formatModel(record.route) : "(default)")

/** What one route of one task adds to its model's row: the one that answered, or one the task left. */
export interface Share {
  succeeded: boolean
  tokens: Tokens
  cost: number
  steps: number
  keptOut: number
  returned: number
  /** The task's duration, on the route that answered only (a route left is not a task's duration). */
  durationMs?: number
}

function row(role: string, model: string, shares: Share[]): StatsRow {
  const tokens = zero()
  let cost = 0
  let steps = 0
  let bytesKeptOut = 0
  let bytesReturned = 0
  for (const share of shares) {
    for (const key of Object.keys(tokens) as (keyof Tokens)[]) tokens[key] += share.tokens[key]
    cost += share.cost
    steps += share.steps
    bytesKeptOut += share.keptOut
    bytesReturned += share.returned
  }
  const succeeded = shares.filter((share) => share.succeeded).length
  const durations = shares.flatMap((share) => (share.durationMs === undefined ? [] : [share.durationMs]))
  return {
    role,
    model,
    tasks: shares.length,
    succeeded,
    successRate: shares.length ? succeeded / shares.length : 0,
    tokens,
    cost,
    steps,
    bytesKeptOut,
    bytesReturned,
    medianDurationMs: median(durations),
  }
}

/**
 * A task's shares, by model: each route it left (with what it spent there, a task that did not succeed on
 * it), then the model that answered, with the rest of the task's spending.
 */
export const totalOf = (record: LedgerRecord) => ({ tokens: record.result!.tokens, cost: record.result!.cost })

export function sharesOf(record: LedgerRecord): { model: string; share: Share }[] {
  const result = record.result!
  const total = { tokens: result.tokens, cost: result.cost }
  const answered = answeredSpend(total, record.fallbackFrom)
  const routes = (record.fallbackFrom ?? []).map((fallback) => ({
    model: fallback.model,
    share: { succeeded: false, tokens: fallback.tokens, cost: fallback.cost, steps: 0, keptOut: 0, returned: 0 },
  }))
  const final: Share = {
    succeeded: record.status === "succeeded",
    ...answered,
    steps: result.steps,
    keptOut: result.bytes?.keptOut ?? 0,
    returned: result.bytes?.returned ?? 0,
    durationMs: result.durationMs ?? 0,
  }
  return [...routes, { model: modelOf(record), share: final }]
}

/** Rows by role, then the busiest model first. */
export const rowOrder = (a: StatsRow, b: StatsRow) =>
  a.role.localeCompare(b.role) || b.tasks - a.tasks || a.model.localeCompare(b.model)

/** A record the ledger counts: finished, with a result. */
export const isCounted = (record: LedgerRecord) => isFinished(record.status) && record.result !== undefined

/** Finished tasks (those with a result) finished at or after `since`, per role and model, and in all. */
export function summarize(records: LedgerRecord[], since?: number): Stats {
  const counted = records.filter(
    (record) =>
      isCounted(record) && (since === undefined || Date.parse(record.finishedAt ?? record.updatedAt) >= since),
  )
  const groups = new Map<string, Share[]>()
  const all: Share[] = []
  for (const record of counted)
    for (const { model, share } of sharesOf(record)) {
      const key = `${record.role}\u0000${model}`
      const group = groups.get(key)
      // Appended in place: a copy per record made the sum quadratic (42 s at 100,000 records).
      if (group) group.push(share)
      else groups.set(key, [share])
      if (share.durationMs !== undefined) all.push({ ...share, ...totalOf(record) })
    }
  const rows = [...groups.entries()]
    .map(([key, group]) => {
      const [role, model] = key.split("\u0000") as [string, string]
      return row(role, model, group)
    })
    .sort(rowOrder)
  return {
    ...(since !== undefined && { since: new Date(since).toISOString() }),
    rows,
    // The total counts each task once, with all it spent.
    total: row("all", "all", all),
  }
}

const kb = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} KB`
const tokens = (t: Tokens) => `${t.input + t.cacheRead + t.cacheWrite} in / ${t.output + t.reasoning} out`

/** A table a person reads: one line per role and model, then the total. */
export function renderStats(stats: Stats): string {
  if (!stats.total.tasks) return `No finished tasks${stats.since ? ` since ${stats.since}` : ""}.`
  const header = ["role", "model", "tasks", "ok", "tokens", "cost", "kept out", "returned", "median"]
  const lines = [...stats.rows, stats.total].map((r) => [
    r.role,
    r.model,
    String(r.tasks),
    `${Math.round(r.successRate * 100)}%`,
    tokens(r.tokens),
    `$${r.cost.toFixed(4)}`,
    kb(r.bytesKeptOut),
    kb(r.bytesReturned),
    `${(r.medianDurationMs / 1000).toFixed(1)}s`,
  ])
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)))
  const format = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd()
  const body = [format(header), ...lines.slice(0, -1).map(format), format(lines.at(-1)!)]
  return [`Finished tasks${stats.since ? ` since ${stats.since}` : ""}:`, ...body].join("\n")
}

/** What the ledger (ledger.ts summarize) reads of a record, kept in its row so a sum reads no file. */
export type LedgerRecord = Pick<TaskRecord, "status" | "route" | "finishedAt" | "updatedAt" | "fallbackFrom"> & {
  /** The role's row: `scout`, or `scout:docs-reader` for a role the person defined that scout ran. */
  role: string
  result?: Pick<NonNullable<TaskRecord["result"]>, "model" | "tokens" | "cost" | "steps" | "bytes" | "durationMs">
}
