// Delegations leave two things behind: a task record, and the parked copy of its session that
// task_continue and `opencode export` use. Both are kept for a while and then removed, so neither the
// state dir nor the user's OpenCode session list fills up with old delegations. A pass does at most
// `perPass` removals, sessions in bounded parallel, so one pass never holds the shared server for long;
// two passes at once (two MCP processes) are harmless: every removal is idempotent, and a record is
// rewritten only if nobody changed it since the pass read it.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { removeSession } from "../../opencode/session"
import { isFinished, type TaskRecord } from "../records"
import type { TaskStore } from "../store"

/** A finished task's parked session: long enough for a day of follow-ups with task_continue. */
const PARKED_SESSION_MS = 24 * 3600_000
/** A finished task's record (its result and evidence). */
export const RECORD_MS = 7 * 24 * 3600_000
/** Finished records kept at most, newest first, whatever their age (RECORD_MIN_MS aside). */
export const RECORD_MAX = 200
/**
 * The least a finished record is kept whatever the count, by this machine's clock: since the record's
 * file was last written here (its finish, or a later change), not since the date the record states. A
 * background task's result is still there for the parent's next task_result however many tasks ran.
 */
export const RECORD_MIN_MS = 3600_000
/**
 * A finished result no parent has been handed (a background task nobody asked about since) is kept this
 * long, whatever the count: the parent may come back for it days later. Past this the parent is gone.
 */
export const UNREAD_RECORD_MS = 30 * 24 * 3600_000
/** A stated date this far ahead of this machine's clock is from a clock set wrong: unknown, never aged. */
const FUTURE_SKEW_MS = 5 * 60_000
/** Session deletes in flight at once against the shared server. */
const DELETES_IN_FLIGHT = 8

export interface PruneOutcome {
  sessionsRemoved: number
  recordsRemoved: number
}

export interface PruneOptions {
  now?: number
  /** Removals (a session, a record) at most in this pass; the rest waits for the next. */
  perPass?: number
}

export interface PlanStep {
  record: TaskRecord
  dropSession: boolean
  dropRecord: boolean
}

/**
 * How long ago `record` finished, by the later of the date it states and the time its file was last
 * written on this machine (`writtenAt`, epoch ms): a record planted or copied in with an old date is
 * as young as its file. Undefined (unknown: kept, never aged) when the stated date is from the future
 * or does not parse, or the file's time is unknown or from the future. Pure.
 */
export function finishedAgo(record: TaskRecord, writtenAt: number | undefined, now: number): number | undefined {
  const stated = Date.parse(record.finishedAt ?? "")
  if (!Number.isFinite(stated) || stated > now + FUTURE_SKEW_MS) return undefined
  if (writtenAt === undefined || !Number.isFinite(writtenAt) || writtenAt > now + FUTURE_SKEW_MS) return undefined
  return Math.max(0, now - Math.max(stated, writtenAt))
}

/**
 * What to do with each finished record (pure): drop its parked session, drop the record, or nothing.
 * `writtenAt` is when each record's file was last written here (by id; marking a result read writes
 * it, so the age of a read result runs from its reading). A record whose age is unknown stays and
 * counts against no other; none goes before RECORD_MIN_MS, whatever the count; a result nobody has
 * read (no resultReadAt) stays UNREAD_RECORD_MS and counts against no other either.
 */
export function retentionPlan(
  records: TaskRecord[],
  now: number,
  writtenAt: ReadonlyMap<string, number> = new Map(),
): PlanStep[] {
  const aged = records
    .filter((record) => isFinished(record.status) && record.finishedAt)
    .map((record) => ({ record, age: finishedAgo(record, writtenAt.get(record.id), now) }))
    .filter((entry): entry is { record: TaskRecord; age: number } => entry.age !== undefined)
  aged.sort((a, b) => a.age - b.age)
  let read = 0
  return aged.map(({ record, age }) => {
    const dropRecord = record.resultReadAt
      ? age > RECORD_MIN_MS && (age > RECORD_MS || read++ >= RECORD_MAX)
      : age > UNREAD_RECORD_MS
    return { record, dropSession: Boolean(record.sessionID) && (dropRecord || age > PARKED_SESSION_MS), dropRecord }
  })
}

/** The steps that do something, oldest first (they have waited longest), cut to `perPass` removals. Pure. */
export function boundedPlan(plan: PlanStep[], perPass: number, canReachServer: boolean): PlanStep[] {
  const chosen: PlanStep[] = []
  let removals = 0
  for (const step of [...plan].reverse()) {
    // Without a connection a session cannot be removed, and its record must keep naming it.
    if (step.dropSession && !canReachServer) continue
    if (!step.dropSession && !step.dropRecord) continue
    const cost = Number(step.dropSession) + Number(step.dropRecord)
    if (removals + cost > perPass) break
    removals += cost
    chosen.push(step)
  }
  return chosen
}

/** Runs `work` on every item with at most `limit` in flight. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0
  const lane = async () => {
    while (next < items.length) await work(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
}

/** Unchanged since the pass read it: still finished, same revision. Another process may have continued it. */
function unchanged(current: TaskRecord | undefined, seen: TaskRecord): current is TaskRecord {
  if (current === undefined || current.revision !== seen.revision) return false
  return isFinished(current.status) && current.sessionID === seen.sessionID
}

const GONE_NOTE = "The parked session was removed after the retention period; task_continue is no longer possible."

export async function prune(store: TaskStore, client: OpencodeClient | undefined, options: PruneOptions = {}) {
  const outcome: PruneOutcome = { sessionsRemoved: 0, recordsRemoved: 0 }
  const records = await store.list()
  const all = retentionPlan(records, options.now ?? Date.now(), store.writtenAt(records.map((record) => record.id)))
  const plan = boundedPlan(all, options.perPass ?? 500, client !== undefined)
  await inParallel(plan, DELETES_IN_FLIGHT, async ({ record, dropSession, dropRecord }) => {
    if (dropSession) {
      // A record keeps naming its session until OpenCode confirms the removal, so nothing is lost on failure.
      if (!(await removeSession(client!, record.sessionID!, record.workspace))) return
      outcome.sessionsRemoved++
      if (!dropRecord) {
        const current = await store.read(record.id)
        if (!unchanged(current, record)) return
        const gone = (r: TaskRecord) => {
          r.sessionID = undefined
          r.note = [r.note, GONE_NOTE].filter(Boolean).join(" ")
        }
        await store.update(current, gone)
      }
    }
    if (dropRecord) {
      if (!unchanged(await store.read(record.id), record)) return
      await store.remove(record.id)
      outcome.recordsRemoved++
    }
  })
  return outcome
}
