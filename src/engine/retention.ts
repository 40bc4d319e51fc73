// Delegations leave two things behind: a task record, and the parked copy of its session that
// task_continue and `opencode export` use. Both are kept for a while and then removed, so neither the
// state dir nor the user's OpenCode session list fills up with old delegations.
import { rm } from "node:fs/promises"
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { removeSession } from "../opencode/session"
import { isFinished, type TaskRecord, type TaskStore } from "./tasks"

/** A finished task's parked session: long enough for a day of follow-ups with task_continue. */
export const PARKED_SESSION_MS = 24 * 3600_000
/** A finished task's record (its result and evidence). */
export const RECORD_MS = 7 * 24 * 3600_000
/** Finished records kept at most, newest first, whatever their age. */
export const RECORD_MAX = 200

export interface PruneOutcome {
  sessionsRemoved: number
  recordsRemoved: number
}

/** What to do with each finished record (pure): drop its parked session, drop the record, or nothing. */
export function retentionPlan(records: TaskRecord[], now: number) {
  const finished = records.filter((r) => isFinished(r.status) && r.finishedAt).sort((a, b) => b.finishedAt!.localeCompare(a.finishedAt!))
  return finished.map((record, index) => {
    const age = now - Date.parse(record.finishedAt!)
    const dropRecord = age > RECORD_MS || index >= RECORD_MAX
    return { record, dropSession: Boolean(record.sessionID) && (dropRecord || age > PARKED_SESSION_MS), dropRecord }
  })
}

export async function prune(store: TaskStore, client: OpencodeClient, now = Date.now()): Promise<PruneOutcome> {
  const outcome: PruneOutcome = { sessionsRemoved: 0, recordsRemoved: 0 }
  for (const { record, dropSession, dropRecord } of retentionPlan(await store.list(), now)) {
    if (dropSession) {
      // A record keeps naming its session until OpenCode confirms the removal, so nothing is lost on failure.
      if (!(await removeSession(client, record.sessionID!, record.workspace))) continue
      outcome.sessionsRemoved++
      record.sessionID = undefined
      record.note = [record.note, "The parked session was removed after the retention period; task_continue is no longer possible."].filter(Boolean).join(" ")
      if (!dropRecord) await store.save(record)
    }
    if (dropRecord) {
      await rm(store.file(record.id), { force: true })
      outcome.recordsRemoved++
    }
  }
  return outcome
}
