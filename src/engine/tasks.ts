// A task's record: what a delegation is, was asked and did, and the pure edits of it (a new record, the
// next turn, a progress line). The store that keeps records is task-store.ts.
import { randomBytes } from "node:crypto"
import type { Role } from "../config/schema"
import { fail } from "../errors"
import type { OpenAsk } from "../opencode/pending"
import type { ModelRoute } from "../opencode/session"
import { selfStart } from "../util/process"
import type { FileChange, Snapshot } from "../workspace/changes"
import type { WaitingInput } from "./inbox"
import type { PolicyDecision } from "./policy"
import type { Activity } from "./progress"
import type { Fallback } from "./routing"
import type { DelegationResult, Status } from "./result"
import type { Spending } from "./usage"

const FINISHED: readonly Status[] = ["succeeded", "failed", "timed_out", "cancelled", "needs_review", "interrupted"]
/** Progress lines kept in a record (the newest); the full story is in the session. */
const PROGRESS_KEPT = 40

/** What a review looked at: an isolated worker's patch, or a workspace's uncommitted files (the first 100). */
export interface Reviewed {
  patchId?: string
  cwd?: string
  files?: FileChange[]
  /** Changed files beyond those listed. */
  more?: number
}

export interface TaskRecord {
  version: 1
  id: string
  role: Role
  agent: string
  workspace: string
  title: string
  /** Writable tasks hold the workspace's writer state while they run. */
  writable: boolean
  status: Status
  idempotencyKey?: string
  /** The session currently holding the conversation (the running one, or the parked copy once finished). */
  sessionID?: string
  /** Every session this task has used, oldest first: a person can `opencode export` any that still exists. */
  sessions: string[]
  route?: ModelRoute
  /** config.json's routes after `route`, not yet tried (routing.ts): the next is tried on a refusal before any step. */
  fallbacks?: ModelRoute[]
  /** The routes this task left, oldest first, each with why and what it spent there. */
  fallbackFrom?: Fallback[]
  /** PID of the MCP server process following the task. */
  ownerPid: number
  /** That process's boot and start time (util/process.ts processStart), so a reused PID is not taken for it. */
  ownerStart?: string
  createdAt: string
  /** When the running (or last) turn began; durations are measured from it. */
  turnStartedAt?: string
  updatedAt: string
  finishedAt?: string
  /**
   * When a parent was first handed this finish's result (a call that waited for it, task_result, a
   * group's answer): retention keeps a result nobody has read (retention.ts). Cleared by the next finish.
   */
  resultReadAt?: string
  /** Epoch ms at which the running turn's session is aborted. */
  deadline: number
  operationMs: number
  /** The running turn's brief, so a process that takes the task over can send it if it never went out. */
  brief?: string
  /** 1 for the first brief, +1 per task_continue. */
  turns: number
  /** Bumped on every change, so a waiter can tell "something happened" from "nothing happened". */
  revision: number
  progress: string[]
  /** The running turn's liveness: current step, last tool and target, time of the latest event. */
  activity?: Activity
  /** Git state of the workspace when the running turn started: files changed are measured against it. */
  snapshot?: Snapshot
  /** An isolated worker: `workspace` is its worktree, `source` the caller's workspace, its edits the patch
   * `patchId`. */
  isolation?: { mode: "worktree"; source: string; patchId: string }
  /** worker only: the command this server runs on the result after every turn (verify.ts). */
  verify?: string
  /** worker only: more files the verification restores from the task's start (workspace/definitions.ts). */
  verifyFrozen?: string[]
  /** The parent's JSON Schema for the final answer of every turn (output-schema.ts). */
  outputSchema?: Record<string, unknown>
  /** worker only: the paths and globs it may change, checked by settle after every turn (scope.ts). */
  scope?: string[]
  /** A review (review-cwd.ts): what it looked at, named in every turn's result. */
  reviewed?: Reviewed
  /** A delegate_parallel member: its first turn counts against maxParallel in whichever process follows it. */
  parallel?: true
  /** What the policy gate decided for each call, the first and every task_continue, oldest first. */
  calls?: Array<PolicyDecision & { turn: number }>
  /** Found before the running turn started (a weakened mode): added to its result's warnings. */
  turnWarnings?: string[]
  /** Asks raised and not yet answered (opencode/pending.ts): whoever takes the task over answers them by id. */
  asks?: OpenAsk[]
  /** A question waiting for the parent's task_respond (inbox.ts); read through waitingOf. */
  waiting?: WaitingInput
  /** Autorun files (workspace/autorun.ts) with their fingerprints when a writable turn started. */
  autorun?: Record<string, string>
  result?: DelegationResult
  /** What the task has spent over all its sessions and turns (usage.ts): the result's tokens and cost, and
   * what the caps count. */
  spending?: Spending
  /** Why the task ended as it did, when the status alone does not say. */
  note?: string
}

export const isFinished = (status: Status) => FINISHED.includes(status)

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
  })
  record.turnWarnings = undefined
  record.turns++
}

/** A new task's record, followed by this process, its first turn starting now. */
export function newRecord(
  request: Pick<TaskRecord, "role" | "agent" | "title" | "writable" | "idempotencyKey" | "brief">,
  fields: Omit<NewRecordFields, keyof typeof request> &
    Pick<TaskRecord, "isolation" | "verify" | "verifyFrozen" | "outputSchema" | "scope" | "reviewed">,
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
