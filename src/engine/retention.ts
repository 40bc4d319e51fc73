// Delegations leave two things behind: a task record, and the parked copy of its session that
// task_continue and `opencode export` use. Both are kept for a while and then removed, so neither the
// state dir nor the user's OpenCode session list fills up with old delegations. A pass does at most
// `perPass` removals, sessions in bounded parallel, so one pass never holds the shared server for long;
// two passes at once (two MCP processes) are harmless: every removal is idempotent, and a record is
// rewritten only if nobody changed it since the pass read it.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { removeSession } from "../opencode/session"
import { isFinished, type TaskRecord } from "./tasks"
import type { TaskStore } from "./task-store"

/** A finished task's parked session: long enough for a day of follow-ups with task_continue. */
const PARKED_SESSION_MS = 24 * 3600_000
/** A finished task's record (its result and evidence). */
export const RECORD_MS = 7 * 24 * 3600_000
/** Finished records kept at most, newest first, whatever their age. */
export const RECORD_MAX = 200
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

/** What to do with each finished record (pure): drop its parked session, drop the record, or nothing. */
export function retentionPlan(records: TaskRecord[], now: number): PlanStep[] {
  const finished = records.filter((r) => isFinished(r.status) && r.finishedAt)
  finished.sort((a, b) => b.finishedAt!.localeCompare(a.finishedAt!))
  return finished.map((record, index) => {
    const age = now - Date.parse(record.finishedAt!)
    const dropRecord = age > RECORD_MS || index >= RECORD_MAX
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
  const all = retentionPlan(await store.list(), options.now ?? Date.now())
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
