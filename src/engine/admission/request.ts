// What a tool asks the engine to start: one delegation, before admission, budget and routing decide
// whether and how it runs (lifecycle.ts).
import type { Role } from "../../config/schema"
import type { Relay } from "../../policy/relay"
import type { CallPolicy } from "./policy"
import type { Isolation } from "./isolation"
import type { Reviewed } from "../records"

export interface StartRequest {
  role: Role
  agent: string
  cwd: string
  brief: string
  /** Short title; the task id is appended so a session can be found again after a restart. */
  title: string
  model?: string
  variant?: string
  /** A role the person defined (roles/catalog.ts), run by this tool when its profile is the tool's. */
  userRole?: string
  writable: boolean
  /** What the call states for the policy gate (policy.ts), which every start passes first. */
  policy: CallPolicy
  /** worker only: "worktree" runs it in an isolated snapshot and returns its edits as a patch. */
  isolation?: Isolation
  /** worker only: a command this server runs on the result in the read-only sandbox (verify.ts). */
  verify?: string
  /** worker only, with verify: globs of more files graded as they were before the worker (definitions.ts). */
  verifyFrozen?: string[]
  /** A JSON Schema the final answer must match (output-schema.ts); checked before anything is written. */
  outputSchema?: unknown
  /** worker only: the workspace-relative paths and globs it may change (src/workspace/scope.ts). */
  scope?: string[]
  /** A review (review.ts): cwd is this patch's worktree, admitted as its own; the policy is the source's. */
  review?: { patchId: string; source: string }
  /** A review of either form: what it looked at, kept on the record and named in the result. */
  reviewed?: Reviewed
  idempotencyKey?: string
  /** This operation's deadline instead of the role's (tests, runner options). */
  timeoutMs?: number
  /** A scout's or worker's `timeout_seconds`: refused when over the role's budget. */
  callTimeoutS?: number
  commandTimeoutS?: number
  /** Puts the session's asks to the person while the caller waits; kept in memory with the running task only. */
  relay?: Relay
  /** A delegate_parallel member: the turn waits for a machine-wide concurrency slot (slots.ts). */
  queued?: boolean
}
