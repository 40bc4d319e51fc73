// The schemas the tools share: the arguments of the delegating calls and the structured result. They
// load with the tools (server.ts); the answers themselves are built in replies.ts.
import { z } from "zod"
import { TIMEOUT_BOUNDS, TIMEOUT_PROFILES } from "../config/bounds"
import { CHANGE_KINDS, FAILURE_KINDS, STATUSES, TITLE_LIMITS, toStructured } from "../engine/terms"
import { MODES } from "../policy/mode"
import { TIERS } from "../policy/tiers"

export { toStructured }

/** Claude Code's `_meta` key for a tool's search keywords (its tool search scores them with the name). */
export const SEARCH_HINT = "anthropic/searchHint"

/** Described once, in the server instructions: a `provider/model` id the `models` tool lists. */
export const modelArgs = {
  model: z.string().min(1).optional(),
  variant: z.string().min(1).optional(),
}

/** The shortest deadline a call may ask for: OpenCode's first answer alone can take seconds. */
const MIN_CALL_TIMEOUT_S = 10

export const callTimeoutArg = (role: "scout" | "worker") => ({
  timeout_seconds: z
    .number()
    .int()
    .min(MIN_CALL_TIMEOUT_S)
    .max(TIMEOUT_BOUNDS.max)
    .optional()
    .describe(`Deadline (default ${TIMEOUT_PROFILES.standard[role]} s).`),
})

export const labelArg = {
  label: z.string().min(1).max(TITLE_LIMITS.label).optional(),
}

/**
 * A role the person defined (src/roles). Described where it exists: the instructions name the person's roles when
 * there are any, and the policy tool lists them; a description here would cost every parent bytes for nothing.
 */
export const roleArg = {
  role: z.string().optional(),
}

export const idempotencyArg = {
  idempotency_key: z.string().min(1).max(200).optional().describe("Retry key."),
}

/**
 * Optional, so calls written for the published arguments work unchanged (src/policy, README "Policy").
 * What `tier` means is said once, in the server instructions, not in each of the five tools taking it.
 */
export const policyArgs = {
  tier: z.enum(TIERS).optional(),
  mode: z.enum(MODES).optional(),
}

export const mechanicalArg = {
  mechanical: z.boolean().optional().describe("The brief spells the edit out."),
}

export const isolationArg = {
  isolation: z.enum(["in_place", "worktree"]).optional().describe("worktree: return a patch."),
}

// The bare fields, so that a delegate_parallel member takes them without repeating their descriptions.
const verifyField = z.string().optional()
const scopeField = z.array(z.string()).optional()

export const verifyArg = {
  verify: verifyField.describe("A check the server runs after, on build and test files as before."),
  verify_frozen: z.array(z.string()).optional().describe("More globs kept as before."),
}

// Untyped and undescribed on purpose: the tool surface's bytes (test/mcp/surface.test.ts); the engine
// refuses anything but a bounded JSON Schema object with its own next step (output-schema.ts).
export const outputSchemaArg = { output_schema: z.unknown().optional() }

/** Tokens as results and the ledger report them (usage.ts counts them). */
export const tokensShape = z.object({
  input: z.number(),
  output: z.number(),
  reasoning: z.number(),
  cache_read: z.number(),
  cache_write: z.number(),
})

export const scopeArg = {
  scope: scopeField.describe("Paths or globs it may change."),
}

/** What a delegate_parallel member takes of the single calls' arguments (the engine refuses a scout's scope). */
export const memberArgs = { ...outputSchemaArg, verify: verifyField, scope: scopeField }

const resultFiles = z.array(z.object({ path: z.string(), change: z.enum(CHANGE_KINDS) })).optional()

export const resultShape = {
  task_id: z.string().optional(),
  status: z.enum(STATUSES),
  role: z.string().optional(),
  report: z.string(),
  model: z.string().optional(),
  steps: z.number(),
  tokens: tokensShape,
  cost: z.number(),
  duration_ms: z.number(),
  session_id: z.string().optional(),
  watch: z.string().optional(),
  workspace: z.string(),
  tool_calls: z.array(
    z.object({ tool: z.string(), status: z.string(), target: z.string(), exit_code: z.number().optional() }),
  ),
  files_changed: resultFiles,
  out_of_scope: z.array(z.string()).optional(),
  commands: z.array(z.object({ command: z.string(), exit_code: z.number().optional() })),
  transcript: z.string().optional(),
  progress: z.array(z.string()).optional(),
  error: z.string().optional(),
  error_kind: z.enum(FAILURE_KINDS).optional(),
  advice: z.string().optional(),
  retry_after_s: z.number().optional(),
  fallback_from: z.array(z.object({ model: z.string(), why: z.string() })).optional(),
  next: z.string().optional(),
  autorun: z
    .object({
      files: z.array(z.object({ path: z.string(), change: z.enum(["new", "changed", "removed"]), rule: z.string() })),
      more: z.number().optional(),
    })
    .optional()
    .describe(
      "Files that act on their own the turn created, changed or removed: each with the rule that matched " +
        "(hidden, root-non-source, executable, mode-change, or known:<tool>); `more` counts those not named.",
    ),
  warnings: z.array(z.string()).optional(),
  patch: z
    .object({
      patch_id: z.string(),
      digest: z.string(),
      summary: z.string(),
      bytes: z.number(),
      disk_bytes: z.number().optional(),
      state: z.enum(["open", "waiting", "applied", "discarded"]).optional(),
      files: z.array(
        z.object({
          path: z.string(),
          old_path: z.string().optional(),
          change: z.enum(CHANGE_KINDS),
          additions: z.number(),
          deletions: z.number(),
          binary: z.boolean(),
          old_mode: z.string().optional(),
          new_mode: z.string().optional(),
        }),
      ),
    })
    .optional(),
  verification: z
    .object({
      command: z.string(),
      exit_code: z.number().nullable(),
      duration_ms: z.number(),
      digest: z.string(),
      definition_changed: z.array(z.string()).optional(),
      as_left: z.object({ exit_code: z.number().nullable(), duration_ms: z.number(), digest: z.string() }).optional(),
      unfrozen: z.string().optional(),
    })
    .optional(),
  output: z.unknown().optional(),
  reviewed: z
    .object({
      patch_id: z.string().optional(),
      cwd: z.string().optional(),
      files: resultFiles,
      more_files: z.number().optional(),
    })
    .optional(),
  output_error: z.object({ message: z.string(), unverified: z.string() }).optional(),
  exit_code: z.number().nullable().optional(),
  log: z.string().optional(),
  bytes: z.object({ transcript: z.number(), logs: z.number(), returned: z.number(), kept_out: z.number() }).optional(),
}
