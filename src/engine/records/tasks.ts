// The pure edits of a task's record (a new record, the next turn, a progress line) and the checks a call
// makes of one (its id, whether it can be continued). The record and its parts are declared once, in
// record-schema.ts; which statuses are final is status.ts; the store that keeps records is store/task-store.ts.
import { randomBytes } from "node:crypto"
import { fail } from "../../errors"
import { selfStart } from "../../util/process"
import type { TaskRecord } from "./record-schema"
import { isFinished } from "./status"

/** Progress lines kept in a record (the newest); the full story is in the session. */
const PROGRESS_KEPT = 40

type NewRecordFields = Pick<
  TaskRecord,
  | "id"
  | "role"
  | "agent"
  | "workspace"
  | "title"
  | "writable"
  | "idempotencyKey"
  | "route"
  | "fallbacks"
  | "brief"
  | "operationMs"
  | "parallel"
>

/** Refuses a task_continue for a task that cannot take one, saying what to do instead. */
export function checkContinuable(record: TaskRecord | undefined, id: string): asserts record is TaskRecord {
  if (!record) throw fail("Usage", `No task ${id}.`, "Call task_list for the known tasks.")
  if (!isFinished(record.status))
    throw fail(
      "Usage",
      `Task ${id} is still ${record.status}.`,
      "Wait for it with task_status (wait_seconds), or task_cancel it first.",
    )
  requireSession(record, id, "continue", "Start a new worker or scout task with the rework as its brief.")
}

/** Refuses a record that kept no session for `purpose` (continue, watch), with `next` as what to do instead. */
export function requireSession(
  record: TaskRecord,
  id: string,
  purpose: string,
  next: string,
): asserts record is TaskRecord & { sessionID: string } {
  if (record.sessionID) return
  throw fail(
    "Usage",
    `Task ${id} has no session to ${purpose} (it ended before one was kept, or retention removed it).`,
    next,
  )
}

/**
 * The record of a finished task, running again for a task_continue turn with `brief`, followed by
 * this process: an edit for TaskStore.update.
 */
export function nextTurn(record: TaskRecord, brief: string, operationMs: number): void {
  Object.assign(record, {
    status: "running",
    ownerPid: process.pid,
    ownerStart: selfStart(),
    turnStartedAt: new Date().toISOString(),
    brief,
    deadline: Date.now() + operationMs,
    operationMs,
  })
  // A continued turn is not queued (lifecycle.ts), so nothing that takes it over queues it either.
  Object.assign(record, {
    result: undefined,
    finishedAt: undefined,
    note: undefined,
    activity: undefined,
    parallel: undefined,
    cancelAskedAt: undefined,
  })
  record.turnWarnings = undefined
  record.turns++
}

/** A new task's record, followed by this process, its first turn starting now. */
export function newRecord(
  request: Pick<TaskRecord, "role" | "agent" | "title" | "writable" | "idempotencyKey" | "brief">,
  fields: Omit<NewRecordFields, keyof typeof request> &
    Pick<TaskRecord, "isolation" | "verify" | "verifyFrozen" | "outputSchema" | "scope" | "reviewed" | "userRole">,
): TaskRecord {
  const now = new Date().toISOString()
  const { role, agent, title, writable, idempotencyKey, brief } = request
  return {
    version: 1,
    ...fields,
    role,
    agent,
    writable,
    idempotencyKey,
    brief,
    // The task id in the title is how a session is found again after a restart.
    title: `${title} [${fields.id}]`,
    status: "running",
    sessions: [],
    ownerPid: process.pid,
    ownerStart: selfStart(),
    createdAt: now,
    turnStartedAt: now,
    updatedAt: now,
    deadline: Date.now() + fields.operationMs,
    turns: 1,
    revision: 0,
    progress: [],
  }
}

/** The role as a person reads it: `scout`, or `scout:docs-reader` when a role the person defined ran. */
export const roleLabel = (record: Pick<TaskRecord, "role" | "userRole">) =>
  record.userRole ? `${record.role}:${record.userRole.name}` : record.role

export const TASK_ID = /^task_[a-z0-9]+_[a-f0-9]+$/

export const newTaskId = () => `task_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`

export function checkTaskId(id: string): void {
  if (!TASK_ID.test(id))
    throw fail(
      "Usage",
      `"${id.slice(0, 80)}" is not a task id.`,
      "Pass the task_id a delegation returned, or call task_list.",
    )
}

/** Appends a progress line, keeping the newest: an edit for TaskStore.update. */
export function noteProgress(record: TaskRecord, line: string) {
  record.progress.push(line)
  if (record.progress.length > PROGRESS_KEPT) record.progress.splice(0, record.progress.length - PROGRESS_KEPT)
}
