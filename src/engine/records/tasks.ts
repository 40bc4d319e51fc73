// A task's record: what a delegation is, was asked and did, and the pure edits of it (a new record, the
// next turn, a progress line). Its parts (status, result, verification, waiting question, policy decision,
// activity) are declared here with it, below every module that acts on them, so the record's type imports
// nothing of the engine but its spending (usage.ts) and failure kinds. The store that keeps records is
// task-store.ts; what a record on disk must hold is record-schema.ts.
import { randomBytes } from "node:crypto"
import type { Role } from "../../config/schema"
import { fail } from "../../errors"
import type { OpenAsk } from "../../opencode/pending"
import type { ModelRoute } from "../../opencode/session"
import { selfStart } from "../../util/process"
import type { Delegation, Mode } from "../../policy/mode"
import type { Tier } from "../../policy/tiers"
import type { ToolCall } from "../../opencode/transcript"
import type { AutorunFlag } from "../../workspace/autorun"
import type { FileChange, Snapshot } from "../../workspace/changes"
import type { PatchFile, PatchState } from "../../workspace/patches"
import type { FailureKind } from "./failure-kinds"
import type { Fallback, Spending } from "./usage"

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
  /**
   * config.json's routes after `route`, not yet tried (fallback.ts): the next is tried on a refusal before
   * any step.
   */
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

/** An isolated worker's edits, as the parent reviews and applies them (patch_show, patch_apply). */
export interface PatchSummary {
  id: string
  digest: string
  files: PatchFile[]
  /** At most 2 KB; patch_show has the diff. */
  summary: string
  bytes: number
  /** What its worktree takes on disk until patch_apply or patch_discard (a lower bound when the walk stopped early). */
  diskBytes?: number
  /** waiting when collected; task_result reads it again from the patch store (applied, discarded). */
  state?: PatchState | "discarded"
}

export const STATUSES = [
  "running",
  "succeeded",
  "failed",
  "timed_out",
  "cancelled",
  "needs_review",
  "interrupted",
] as const

export type Status = (typeof STATUSES)[number]

export interface Command {
  command: string
  exitCode?: number
}

export interface DelegationResult {
  status: Status
  role: Role
  report: string
  taskID?: string
  sessionID?: string
  /** provider/model#variant that actually answered, from OpenCode's messages. */
  model?: string
  /** The routes of config.json's list the task left before `model`, each with why (fallback.ts). */
  fallbackFrom?: { model: string; why: string }[]
  steps: number
  tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number }
  cost: number
  durationMs: number
  workspace: string
  tools: ToolCall[]
  /** From git (before/after snapshots), not from the model; undefined outside a git repository. */
  files?: FileChange[]
  /** A scoped worker's changed files outside its scope (scope.ts); in a worktree, left out of the patch. */
  outOfScope?: string[]
  /** worker with isolation "worktree": the patch its edits were collected into. */
  patch?: PatchSummary
  /** A runner's command as the sandbox saw it: exit code (null when killed) and the full log on disk. */
  run?: { exitCode: number | null; log: string; timedOut: boolean; lines?: number }
  /** A worker's `verify` command as this server ran it on the result (verify.ts), not as the agent reported. */
  verification?: Verification
  /** With an output_schema: the final answer's JSON value as parsed, validated against it (output-schema.ts). */
  output?: unknown
  /** A review: the patch, or the cwd and its uncommitted files, it looked at (review-cwd.ts). */
  reviewed?: Reviewed
  /** With an output_schema the answer did not match: the validator's message and the raw text, unverified. */
  outputError?: { message: string; unverified: string }
  /** Files that act on their own the turn created, changed or removed, each with its rule; the rest counted. */
  autorun?: { files: AutorunFlag[]; more?: number }
  /** Things the parent must look at before trusting the outcome (e.g. planted git metadata). */
  warnings?: string[]
  /** Shell commands the agent ran, with their exit codes when the tool reported one. */
  commands: Command[]
  /** Where the whole conversation can be read. */
  transcript?: string
  error?: string
  /** Why it failed, classified (failure.ts); `error` keeps the provider's own words. */
  errorKind?: FailureKind
  /** One sentence on what that kind of failure means. */
  advice?: string
  /** Seconds the provider asked to wait before retrying, when it said. */
  retryAfterS?: number
  /** What the parent should do next, when the outcome needs it. */
  next?: string
  /** The savings ledger's bytes: what the agent read and wrote, and logs on disk, against what was returned. */
  bytes?: Bytes
}

export interface Bytes {
  /** The conversation's content (text, reasoning, tool inputs and outputs). */
  transcript: number
  /** A runner's log on disk. */
  logs: number
  /** What the parent's model receives: the structured content's JSON (structured.ts), these figures included. */
  returned: number
  /** transcript + logs − returned, at least 0: what the parent did not have to read. */
  keptOut: number
}

/** A question as the record keeps it for the parent: clipped as a form would show it. */
export interface WaitingQuestion {
  question: string
  header: string
  options: string[]
  /** Free text is taken as well as the options. */
  free: boolean
}

/** The record's `waiting`: the task's agent waits for task_respond until `until`. */
export interface WaitingInput {
  questions: WaitingQuestion[]
  since: string
  until: string
}

/** What the gate let through, kept on the task for each call: a later call compares its mode to it. */
export interface PolicyDecision {
  mode: Mode
  /** Where the mode came from, as describeSource words it. */
  source: string
  delegation: Delegation
  tier?: Tier
  /** Sensitive markers remembered here that are gone (mode-memory.ts): still obeyed, said in the result. */
  missingMarkers?: MissingMarker[]
}

/** A sensitive marker the product remembers that is no longer there, or a directory whose memory could not be read. */
export interface MissingMarker {
  path: string
  /** When the marker was first seen, or why the directory is held. */
  why: string
}

/** What task_status shows of a running task's liveness, kept in its record. */
export interface Activity {
  /** The model step the session is in (1 for the first). */
  step: number
  tool?: string
  target?: string
  /** When the session's latest event came (ISO): a busy session silent for long is stuck or waiting on the provider. */
  at: string
}

/** One run of the command. exitCode is null when the command was killed or never ran. */
export interface CheckRun {
  exitCode: number | null
  durationMs: number
  /** The runner's failure digest of the output (bounded), or why the command could not run. */
  digest: string
}

/** What the parent receives as `verification`: the grade is the run on the definition as it was before. */
export interface Verification extends CheckRun {
  command: string
  /** Definition files the worker added, changed or removed (at most MAX_NAMED, then a count); [] for none. */
  definitionChanged?: string[]
  /** With definitionChanged: the command on the workspace exactly as the worker left it. */
  asLeft?: CheckRun
  /** Why the definition could not be held as it was before (graded as left then, and needs_review). */
  unfrozen?: string
}
