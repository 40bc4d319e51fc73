// Pieces every delegating tool shares: the structured result schema, progress notifications, and
// turning errors into results the parent can act on.
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"
import { TIMEOUT_BOUNDS, TIMEOUT_PROFILES } from "../config/schema"
import { AppError } from "../errors"
import { ERROR_KINDS } from "../engine/failure"
import { TITLE_LIMITS } from "../engine/title"
import { fromTranscript, STATUSES, renderText, type DelegationResult } from "../engine/result"
import { toStructured } from "../engine/structured"
import type { TaskRecord } from "../engine/tasks"
import { MODES } from "../policy/mode"
import { TIERS } from "../policy/tiers"

export { toStructured }

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

export const modelArgs = {
  model: z.string().min(1).optional().describe("Optional provider/model to use instead of the configured one (see the models tool)."),
  variant: z.string().min(1).optional().describe("Optional model variant (e.g. a reasoning effort) as OpenCode lists it for that model."),
}

/** The shortest deadline a call may ask for: OpenCode's first answer alone can take seconds. */
export const MIN_CALL_TIMEOUT_S = 10

export const callTimeoutArg = (role: "scout" | "worker") => ({
  timeout_seconds: z
    .number()
    .int()
    .min(MIN_CALL_TIMEOUT_S)
    .max(TIMEOUT_BOUNDS.max)
    .optional()
    .describe(
      `Optional: this call's deadline in seconds, instead of the ${role}'s (timeoutLimits.${role} in config.json, default ${TIMEOUT_PROFILES.standard[role]}); more than that is refused before anything starts. A task past it ends timed_out.`,
    ),
})

export const labelArg = {
  label: z.string().min(1).max(TITLE_LIMITS.label).optional().describe("Optional lane label for the session's title in OpenCode (who delegated this), instead of OPENCODE_MCP_ORCHESTRATOR_LABEL."),
}

export const idempotencyArg = {
  idempotency_key: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("Optional key for retries: a call with a key already used re-attaches to that task (running or finished) instead of starting another."),
}

/** Optional, so calls written for the published arguments work unchanged (src/policy, README "Policy"). */
export const policyArgs = {
  tier: z
    .enum(TIERS)
    .optional()
    .describe("Optional: how hard you judge this work. easy or medium is delegated; hard or unsure is refused, and you do it yourself. Required when the server's config says so."),
  mode: z
    .enum(MODES)
    .optional()
    .describe(
      "Optional: blueprint (every role), sensitive (scouts, read-only runners and mechanical workers only) or insensitive. A workspace marked sensitive anywhere stays sensitive; the policy tool shows a workspace's mode.",
    ),
}

export const mechanicalArg = {
  mechanical: z
    .boolean()
    .optional()
    .describe(
      "Optional: true when the change is mechanical (a rename, a format, an edit the brief spells out exactly), with no judgement left to the agent. In a sensitive workspace only mechanical workers run.",
    ),
}

export const isolationArg = {
  isolation: z
    .enum(["in_place", "worktree"])
    .optional()
    .describe(
      'Optional, default "in_place" (edits land in cwd). "worktree": the worker edits a snapshot of cwd\'s repository (HEAD plus staged, unstaged and untracked files) and its edits come back as a patch (patch_id, digest) to review with patch_show and apply with patch_apply; cwd is not touched and not locked.',
    ),
}

export const resultShape = {
  task_id: z.string().optional().describe("The task: pass it to task_status, task_result, task_cancel or task_continue."),
  status: z.enum(STATUSES).describe("succeeded, failed, timed_out, cancelled, needs_review, running or interrupted"),
  report: z.string().describe("The agent's final report."),
  model: z.string().optional().describe("The provider/model#variant that actually answered."),
  steps: z.number().describe("Model steps used."),
  tokens: z.object({ input: z.number(), output: z.number(), reasoning: z.number(), cache_read: z.number(), cache_write: z.number() }),
  cost: z.number().describe("Cost as OpenCode reports it (0 when the provider does not price it)."),
  duration_ms: z.number(),
  session_id: z.string().optional(),
  workspace: z.string(),
  tool_calls: z.array(z.object({ tool: z.string(), status: z.string(), target: z.string(), exit_code: z.number().optional() })),
  files_changed: z
    .array(z.object({ path: z.string(), change: z.enum(["added", "modified", "deleted", "renamed"]) }))
    .optional()
    .describe("Files the task changed, from git status before and after it (absent outside a git repository)."),
  commands: z.array(z.object({ command: z.string(), exit_code: z.number().optional() })).describe("Shell commands the agent ran, with exit codes."),
  transcript: z.string().optional().describe("Where the whole conversation can be read."),
  progress: z.array(z.string()).optional().describe("The latest progress lines of a running task."),
  error: z.string().optional().describe("What failed, in OpenCode's or the provider's words."),
  error_kind: z
    .enum(ERROR_KINDS)
    .optional()
    .describe("Why it failed: rate_limit, quota, auth, model_not_found, context_length, output_limit, overloaded, network, timeout, sandbox, cancelled, server_lost or unknown (README, Errors)."),
  advice: z.string().optional().describe("What that kind of failure means."),
  retry_after_s: z.number().optional().describe("Seconds the provider asked to wait before a retry, when it said."),
  next: z.string().optional().describe("What to do next when the outcome needs it."),
  warnings: z.array(z.string()).optional().describe("Things to inspect before trusting the outcome."),
  patch: z
    .object({
      patch_id: z.string(),
      digest: z.string().describe("Pass it to patch_apply: it proves you reviewed exactly this patch."),
      summary: z.string().describe("At most 2 KB; patch_show has the diff."),
      bytes: z.number().describe("The patch's size (the diff), not what its worktree takes: see disk_bytes."),
      disk_bytes: z.number().optional().describe("What the worker's worktree takes on disk (du-like) until patch_apply or patch_discard."),
      state: z.enum(["open", "waiting", "applied", "discarded"]).optional().describe("waiting, applied (patch_discard it) or discarded, as the patch store says now."),
      files: z.array(
        z.object({
          path: z.string(),
          old_path: z.string().optional(),
          change: z.enum(["added", "modified", "deleted", "renamed"]),
          additions: z.number(),
          deletions: z.number(),
          binary: z.boolean(),
          old_mode: z.string().optional(),
          new_mode: z.string().optional(),
        }),
      ),
    })
    .optional()
    .describe('worker with isolation "worktree": its edits as a patch against the snapshot it started from.'),
  exit_code: z.number().nullable().optional().describe("runner: the command's exit code, from the sandbox (null when it was killed)."),
  log: z.string().optional().describe("runner: the command's full output, on disk; never returned whole."),
  bytes: z
    .object({ transcript: z.number(), logs: z.number(), returned: z.number(), kept_out: z.number() })
    .optional()
    .describe("What delegating kept out of your context: the conversation's and logs' bytes against this structured result's bytes (returned)."),
}

export function delegationResult(result: DelegationResult): CallToolResult {
  return {
    content: [{ type: "text", text: renderText(result) }],
    structuredContent: toStructured(result),
    isError: result.status === "failed",
  }
}

/** A task that is still running: its id, what it did lately, and how to continue. */
export function runningResult(record: TaskRecord, waitedMs: number): CallToolResult {
  const result: DelegationResult = {
    ...fromTranscript({ role: record.role, workspace: record.workspace, taskID: record.id, sessionID: record.sessionID, durationMs: Date.now() - Date.parse(record.createdAt), status: "running" }),
    report: record.progress.length ? `Still running. Latest: ${record.progress.at(-1)}` : "Still running.",
    next: `The task continues in the background. Call task_status with task_id "${record.id}" and wait_seconds (up to 50) to follow it, task_result when it is done, or task_cancel to stop it. Waited ${Math.round(waitedMs / 1000)}s here so the call returns before the client's deadline.`,
  }
  return { content: [{ type: "text", text: renderText(result) }], structuredContent: { ...toStructured(result), progress: record.progress.slice(-10) } }
}

/** An expected failure (bad input, missing prerequisite) as a result the parent can act on. */
export function errorResult(error: unknown): CallToolResult {
  const text = error instanceof AppError ? [error.message, error.hint && `next: ${error.hint}`].filter(Boolean).join("\n") : `internal error: ${error instanceof Error ? error.message : String(error)}`
  return { content: [{ type: "text", text }], isError: true }
}

/** Sends numbered progress notifications when the client asked for them (a progressToken). */
export function progressReporter(extra: Extra): (message: string) => void {
  const token = extra._meta?.progressToken
  if (token === undefined) return () => {}
  let count = 0
  return (message) => {
    count++
    // Progress to a client that already left has no one to tell; the task goes on.
    void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: count, message } }).catch(() => undefined)
  }
}
