// The task record, declared once: the record and each of its parts (status, result, patch summary,
// verification, waiting question, policy decision, activity) as a zod schema, every type inferred from it.
// A part whose type a lower module declares (a route, a tool call, a file change, a snapshot) is checked
// for what this record's readers rely on and typed as that module's (`owned`, util/schema.ts). The store reads a record
// file through RecordSchema (store/task-store.ts): a record that fails is set aside (util/state-file.ts),
// never a reason a listing or a sum fails for the other tasks. The pure edits of a record are tasks.ts.
import { z } from "zod"
import { ROLES } from "../../config/bounds"
import type { OpenAsk } from "../../opencode/pending"
import type { ModelRoute } from "../../opencode/session"
import type { ToolCall } from "../../opencode/transcript"
import { type Delegation, MODES } from "../../policy/mode"
import { TIERS } from "../../policy/tiers"
import { count, date, owned } from "../../util/schema"
import { type AutorunFlag, CHANGE_KINDS, type FileChange, type Snapshot } from "../../workspace/snapshot"
import { type PatchFile, PATCH_STATES } from "../../workspace/patches"
import { FAILURE_KINDS } from "./failure-kinds"
import { STATUSES } from "./status"
import { FallbackSchema, RouteSchema, SpendingSchema, TokensSchema } from "./usage"

const FileChangeSchema = owned<FileChange>(z.looseObject({ path: z.string(), change: z.enum(CHANGE_KINDS) }))

/** What a review looked at: an isolated worker's patch, or a workspace's uncommitted files (the first 100). */
const ReviewedSchema = z.object({
  patchId: z.string().optional(),
  cwd: z.string().optional(),
  files: z.array(FileChangeSchema).optional(),
  /** Changed files beyond those listed. */
  more: count.optional(),
})
export type Reviewed = z.infer<typeof ReviewedSchema>

/** An isolated worker's edits, as the parent reviews and applies them (patch_show, patch_apply). */
const PatchSummarySchema = z.object({
  id: z.string(),
  digest: z.string(),
  files: z.array(owned<PatchFile>(z.looseObject({ path: z.string(), change: z.enum(CHANGE_KINDS) }))),
  /** At most 2 KB; patch_show has the diff. */
  summary: z.string(),
  bytes: count,
  /** What its worktree takes on disk until patch_apply or patch_discard (a lower bound when the walk stopped early). */
  diskBytes: count.optional(),
  /** waiting when collected; task_result reads it again from the patch store (applied, discarded). */
  state: z.enum([...PATCH_STATES, "discarded"]).optional(),
})
export type PatchSummary = z.infer<typeof PatchSummarySchema>

const CommandSchema = z.object({ command: z.string(), exitCode: z.number().optional() })
export type Command = z.infer<typeof CommandSchema>

/** One run of the command. exitCode is null when the command was killed or never ran. */
const CheckRunSchema = z.object({
  exitCode: z.number().nullable(),
  durationMs: z.number(),
  /** The runner's failure digest of the output (bounded), or why the command could not run. */
  digest: z.string(),
})
export type CheckRun = z.infer<typeof CheckRunSchema>

/** What the parent receives as `verification`: the grade is the run on the definition as it was before. */
const VerificationSchema = CheckRunSchema.extend({
  command: z.string(),
  /** Definition files the worker added, changed or removed (at most MAX_NAMED, then a count); [] for none. */
  definitionChanged: z.array(z.string()).optional(),
  /** With definitionChanged: the command on the workspace exactly as the worker left it. */
  asLeft: CheckRunSchema.optional(),
  /** Why the definition could not be held as it was before (graded as left then, and needs_review). */
  unfrozen: z.string().optional(),
})
export type Verification = z.infer<typeof VerificationSchema>

const BytesSchema = z.object({
  /** The conversation's content (text, reasoning, tool inputs and outputs). */
  transcript: count,
  /** A runner's log on disk. */
  logs: count,
  /** What the parent's model receives: the structured content's JSON (structured.ts), these figures included. */
  returned: count,
  /** transcript + logs − returned, at least 0: what the parent did not have to read. */
  keptOut: count,
})
export type Bytes = z.infer<typeof BytesSchema>

const DelegationResultSchema = z.object({
  status: z.enum(STATUSES),
  role: z.enum(ROLES),
  /** The role the person defined that ran (engine/admission/roles.ts), by name. */
  userRole: z.string().optional(),
  report: z.string(),
  taskID: z.string().optional(),
  sessionID: z.string().optional(),
  /** provider/model#variant that actually answered, from OpenCode's messages. */
  model: z.string().optional(),
  /** The routes of config.json's list the task left before `model`, each with why (fallback.ts). */
  fallbackFrom: z.array(z.object({ model: z.string(), why: z.string() })).optional(),
  steps: count,
  tokens: TokensSchema,
  cost: count,
  durationMs: count,
  workspace: z.string(),
  tools: z.array(owned<ToolCall>(z.looseObject({ tool: z.string() }))),
  /** From git (before/after snapshots), not from the model; undefined outside a git repository. */
  files: z.array(FileChangeSchema).optional(),
  /** A scoped worker's changed files outside its scope (scope.ts); in a worktree, left out of the patch. */
  outOfScope: z.array(z.string()).optional(),
  /** worker with isolation "worktree": the patch its edits were collected into. */
  patch: PatchSummarySchema.optional(),
  /** A runner's command as the sandbox saw it: exit code (null when killed) and the full log on disk. */
  run: z
    .object({ exitCode: z.number().nullable(), log: z.string(), timedOut: z.boolean(), lines: z.number().optional() })
    .optional(),
  /** A worker's `verify` command as this server ran it on the result (verify.ts), not as the agent reported. */
  verification: VerificationSchema.optional(),
  /** With an output_schema: the final answer's JSON value as parsed, validated against it (output-schema.ts). */
  output: z.unknown().optional(),
  /** A review: the patch, or the cwd and its uncommitted files, it looked at (review-cwd.ts). */
  reviewed: ReviewedSchema.optional(),
  /** With an output_schema the answer did not match: the validator's message and the raw text, unverified. */
  outputError: z.object({ message: z.string(), unverified: z.string() }).optional(),
  /** Files that act on their own the turn created, changed or removed, each with its rule; the rest counted. */
  autorun: z
    .object({ files: z.array(owned<AutorunFlag>(z.looseObject({ path: z.string() }))), more: count.optional() })
    .optional(),
  /** Things the parent must look at before trusting the outcome (e.g. planted git metadata). */
  warnings: z.array(z.string()).optional(),
  /** Shell commands the agent ran, with their exit codes when the tool reported one. */
  commands: z.array(CommandSchema),
  /** Where the whole conversation can be read. */
  transcript: z.string().optional(),
  error: z.string().optional(),
  /** Why it failed, classified (failure.ts); `error` keeps the provider's own words. */
  errorKind: z.enum(FAILURE_KINDS).optional(),
  /** One sentence on what that kind of failure means. */
  advice: z.string().optional(),
  /** Seconds the provider asked to wait before retrying, when it said. */
  retryAfterS: z.number().optional(),
  /** What the parent should do next, when the outcome needs it. */
  next: z.string().optional(),
  /** The savings ledger's bytes: what the agent read and wrote, and logs on disk, against what was returned. */
  bytes: BytesSchema.optional(),
})
export type DelegationResult = z.infer<typeof DelegationResultSchema>

/** A question as the record keeps it for the parent: clipped as a form would show it. */
const WaitingQuestionSchema = z.object({
  question: z.string(),
  header: z.string(),
  options: z.array(z.string()).max(100),
  /** Free text is taken as well as the options. */
  free: z.boolean(),
})
export type WaitingQuestion = z.infer<typeof WaitingQuestionSchema>

/** The record's `waiting`: the task's agent waits for task_respond until `until`. */
export const WaitingInputSchema = z.object({
  questions: z.array(WaitingQuestionSchema).min(1).max(100),
  since: z.string(),
  until: z.string(),
})
export type WaitingInput = z.infer<typeof WaitingInputSchema>

/** A sensitive marker the product remembers that is no longer there, or a directory whose memory could not be read. */
const MissingMarkerSchema = z.object({
  path: z.string(),
  /** When the marker was first seen, or why the directory is held. */
  why: z.string(),
})
export type MissingMarker = z.infer<typeof MissingMarkerSchema>

/** What the gate let through, kept on the task for each call: a later call compares its mode to it. */
const PolicyDecisionSchema = z.object({
  mode: z.enum(MODES),
  /** Where the mode came from, as describeSource words it. */
  source: z.string(),
  delegation: owned<Delegation>(z.looseObject({ role: z.enum(ROLES) })),
  tier: z.enum(TIERS).optional(),
  /** Sensitive markers remembered here that are gone (mode-memory.ts): still obeyed, said in the result. */
  missingMarkers: z.array(MissingMarkerSchema).optional(),
})
export type PolicyDecision = z.infer<typeof PolicyDecisionSchema>

/** What task_status shows of a running task's liveness, kept in its record. */
const ActivitySchema = z.object({
  /** The model step the session is in (1 for the first). */
  step: z.number(),
  tool: z.string().optional(),
  target: z.string().optional(),
  /** When the session's latest event came (ISO): a busy session silent for long is stuck or waiting on the provider. */
  at: date,
})
export type Activity = z.infer<typeof ActivitySchema>

const TaskRecordSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  role: z.enum(ROLES),
  agent: z.string(),
  workspace: z.string().startsWith("/"),
  title: z.string(),
  /** Writable tasks hold the workspace's writer state while they run. */
  writable: z.boolean(),
  status: z.enum(STATUSES),
  idempotencyKey: z.string().optional(),
  /** The session currently holding the conversation (the running one, or the parked copy once finished). */
  sessionID: z.string().optional(),
  /** Every session this task has used, oldest first: a person can `opencode export` any that still exists. */
  sessions: z.array(z.string()),
  route: owned<ModelRoute>(
    z.looseObject({ providerID: z.string(), modelID: z.string(), variant: z.string().optional() }),
  ).optional(),
  /**
   * config.json's routes after `route`, not yet tried (fallback.ts): the next is tried on a refusal before
   * any step.
   */
  fallbacks: z.array(RouteSchema).optional(),
  /** The routes this task left, oldest first, each with why and what it spent there. */
  fallbackFrom: z.array(FallbackSchema).optional(),
  /** PID of the MCP server process following the task. */
  ownerPid: z.number().int(),
  /** That process's boot and start time (util/process.ts processStart), so a reused PID is not taken for it. */
  ownerStart: z.string().optional(),
  createdAt: date,
  /** When the running (or last) turn began; durations are measured from it. */
  turnStartedAt: date.optional(),
  updatedAt: date,
  finishedAt: date.optional(),
  /**
   * When a parent was first handed this finish's result (a call that waited for it, task_result, a
   * group's answer): retention keeps a result nobody has read (retention.ts). Cleared by the next finish.
   */
  resultReadAt: date.optional(),
  /**
   * When a parent asked to cancel the running turn (task_cancel, or the call's own cancel), written before
   * the cancel starts: a process that takes the task over finishes the cancel (recovery.ts), since the one
   * that heard it may be killed first (Codex kills its server right after cancelling a call). Cleared by
   * the next turn.
   */
  cancelAskedAt: date.optional(),
  /** Epoch ms at which the running turn's session is aborted. */
  deadline: z.number(),
  operationMs: z.number(),
  /** The running turn's brief, so a process that takes the task over can send it if it never went out. */
  brief: z.string().optional(),
  /** 1 for the first brief, +1 per task_continue. */
  turns: z.number().int(),
  /** Bumped on every change, so a waiter can tell "something happened" from "nothing happened". */
  revision: z.number().int(),
  progress: z.array(z.string()),
  /** The running turn's liveness: current step, last tool and target, time of the latest event. */
  activity: ActivitySchema.optional(),
  /** Git state of the workspace when the running turn started: files changed are measured against it. */
  snapshot: owned<Snapshot>(
    z.looseObject({
      git: z.boolean(),
      entries: z.record(z.string(), z.looseObject({ status: z.string(), hash: z.string() })),
      since: z.number().optional(),
    }),
  ).optional(),
  /**
   * An isolated worker: `workspace` is its worktree, `source` the caller's workspace, its edits the patch
   * `patchId`; a continue runs there and must still own it (isolation.ts checkOwnWorktree).
   */
  isolation: z
    .object({ mode: z.literal("worktree"), source: z.string().startsWith("/"), patchId: z.string() })
    .optional(),
  /** worker only: the command this server runs on the result after every turn (verify.ts). */
  verify: z.string().optional(),
  /** worker only: more files the verification restores from the task's start (workspace/snapshot/definitions.ts). */
  verifyFrozen: z.array(z.string()).optional(),
  /** The parent's JSON Schema for the final answer of every turn (output-schema.ts); re-checked when read. */
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  /** worker only: the paths and globs it may change, checked by settle after every turn (scope.ts). */
  scope: z.array(z.string()).optional(),
  /** A review (review-cwd.ts): what it looked at, named in every turn's result. */
  reviewed: ReviewedSchema.optional(),
  /**
   * A role the person defined (engine/admission/roles.ts): its name, where it was defined, and the prompt read
   * when the task started, sent as the system text of every turn.
   */
  userRole: z.object({ name: z.string(), source: z.string(), prompt: z.string() }).optional(),
  /** A delegate_parallel member: its first turn counts against maxParallel in whichever process follows it. */
  parallel: z.literal(true).optional(),
  /** What the policy gate decided for each call, the first and every task_continue, oldest first. */
  calls: z.array(PolicyDecisionSchema.extend({ turn: z.number().int() })).optional(),
  /** Found before the running turn started (a weakened mode): added to its result's warnings. */
  turnWarnings: z.array(z.string()).optional(),
  /**
   * Asks raised and not yet answered: whoever takes the task over answers them by id. Read only through
   * knownAsks (opencode/pending.ts), which keeps the well-formed entries: garbage here is no ask, never a
   * reason to set the task aside, so nothing is checked at read.
   */
  asks: owned<OpenAsk[]>(z.unknown()).optional(),
  /**
   * A question waiting for the parent's task_respond (inbox.ts). A malformed one is no question: read as
   * absent, never a reason to set the task aside (task_status shows none, task_respond refuses).
   */
  waiting: WaitingInputSchema.optional().catch(undefined),
  /** Autorun files (workspace/snapshot/autorun.ts) with their fingerprints when a writable turn started. */
  autorun: z.record(z.string(), z.string()).optional(),
  result: DelegationResultSchema.optional(),
  /**
   * What the task has spent over all its sessions and turns (usage.ts): the result's tokens and cost, and
   * what the caps count.
   */
  spending: SpendingSchema.optional(),
  /** Why the task ended as it did, when the status alone does not say. */
  note: z.string().optional(),
})
export type TaskRecord = z.infer<typeof TaskRecordSchema>

/** A record file as the store reads it: the record's schema, with keys a newer version wrote kept as they are. */
export const RecordSchema = TaskRecordSchema.loose()
