// The one source of truth for config.json. Defaults live here; types come from z.infer.
import { z } from "zod"
import {
  INSTANCE_BOUNDS,
  LANE_BOUNDS,
  MAX_PARALLEL,
  PARENT_MARGIN_S,
  PATCH_BYTES_BOUNDS,
  RECYCLE_BOUNDS,
  RETENTION_INTERVAL_BOUNDS,
  RETENTION_PER_PASS_BOUNDS,
  ROLES,
  STEP_BOUNDS,
  STEP_PROFILES,
  TIMEOUT_BOUNDS,
  TIMEOUT_PROFILES,
  type Role,
} from "./bounds"
import { ClaudeAgentsSchema, RolesSchema } from "./roles"
import { PolicySchema, TrustedRootSchema } from "./sections"

export {
  LANE_BOUNDS,
  PARENT_MARGIN_S,
  PATCH_BYTES_BOUNDS,
  ROLES,
  STEP_PROFILES,
  TIMEOUT_BOUNDS,
  TIMEOUT_PROFILES,
  type Role,
} from "./bounds"

const modelId = z
  .string()
  .regex(/^[^/\s]+\/\S+$/, "a model is written provider/model, as `opencode models` lists it")
  .describe("An OpenCode model id, provider/model.")

/** The most models a role's route list in config.json may name. */
const MAX_ROUTES = 8

const perRole = <T extends z.ZodType>(value: T) =>
  z.object({ scout: value.optional(), worker: value.optional(), runner: value.optional() }).strict()

const stepCount = z.number().int().min(STEP_BOUNDS.min).max(STEP_BOUNDS.max)
const seconds = z.number().int().min(TIMEOUT_BOUNDS.min).max(TIMEOUT_BOUNDS.max)

const StepLimitsSchema = z
  .discriminatedUnion("profile", [
    z.object({ profile: z.literal("standard") }).strict(),
    z.object({ profile: z.literal("extended") }).strict(),
    z.object({ profile: z.literal("custom"), scout: stepCount, worker: stepCount, runner: stepCount }).strict(),
  ])
  .describe("Maximum model steps per role: standard 16/32/40, extended 32/48/64, or custom 4..256 each.")

const TimeoutLimitsSchema = z
  .discriminatedUnion("profile", [
    z.object({ profile: z.literal("standard") }).strict(),
    z.object({ profile: z.literal("extended") }).strict(),
    z
      .object({ profile: z.literal("custom"), scout: seconds, worker: seconds, runner: seconds, parent: seconds })
      .strict()
      .superRefine((value, ctx) => {
        for (const role of ROLES) {
          if (value.parent < value[role] + PARENT_MARGIN_S)
            ctx.addIssue({
              code: "custom",
              path: ["parent"],
              message:
                `parent (${value.parent}s) must be at least ${PARENT_MARGIN_S}s longer than ${role} ` +
                `(${value[role]}s); raise parent to ${value[role] + PARENT_MARGIN_S} or lower ${role}`,
            })
        }
      }),
  ])
  .describe("Wall-clock seconds per role and for the parent's tool call deadline.")

/** The smallest token cap: one step of OpenCode's system prompt and tools alone is a few thousand. */
const TOKEN_CAP_MIN = 1000

/** Bytes of a scout's or worker's text block: the default keeps a delegation's answer to a screenful. */
const REPORT_BOUNDS = { min: 1024, max: 1_048_576, fallback: 2048 } as const

const absolutePath = z.string().startsWith("/", "an absolute path")

export const ConfigSchema = z
  .object({
    $schema: z.string().optional(),
    version: z.literal(1).describe("Config format version; always 1."),
    models: perRole(z.union([modelId, z.array(modelId).min(1).max(MAX_ROUTES)]))
      .default({})
      .describe(
        "Model per role, or an ordered list of them: the next is tried when one is refused before any step (quota, " +
          "auth, unknown model). A role left out uses OpenCode's default model.",
      ),
    modelVariants: perRole(z.string().min(1))
      .default({})
      .describe("Variant per role as OpenCode lists it for that model; left out means OpenCode's default."),
    stepLimits: StepLimitsSchema.optional().describe("Step-limit profile; absent means standard."),
    timeoutLimits: TimeoutLimitsSchema.optional().describe(
      "Timeout profile; absent means standard (extended when stepLimits is extended).",
    ),
    integrations: z
      .array(z.enum(["codex", "claude"]))
      .default([])
      .describe("Parent clients this program is registered with."),
    sandboxRuntime: z
      .object({ trustedRoots: z.array(TrustedRootSchema).default([]) })
      .strict()
      .default({ trustedRoots: [] })
      .describe("Extra toolchains mounted read-only into the sandbox."),
    workspaceRoots: z
      .array(absolutePath)
      .default([])
      .describe("When non-empty, a delegation's cwd must lie inside one of these directories."),
    trustedProjectConfig: z
      .array(absolutePath)
      .default([])
      .describe(
        "Directories whose OpenCode project plugins (.opencode/plugins, opencode.json plugin lists) may run on the " +
          "host; empty refuses every workspace that has them.",
      ),
    maxParallel: z
      .number()
      .int()
      .min(1)
      .max(MAX_PARALLEL)
      .default(3)
      .describe(
        "How many delegated sessions may run at once on this machine, across every MCP server process; " +
          "delegate_parallel members beyond it wait their turn (1..8).",
      ),
    maxWorktreeLanes: z
      .number()
      .int()
      .min(1)
      .max(LANE_BOUNDS.max)
      .default(LANE_BOUNDS.fallback)
      .describe(
        "How many isolated worktrees (lanes) may exist at once, each a full copy of its repository kept until its " +
          'patch is applied or discarded; a worker with isolation "worktree" beyond it is refused before it ' +
          "starts, naming the oldest waiting patches (1..999).",
      ),
    instanceIdleSeconds: z
      .number()
      .int()
      .min(1)
      .max(INSTANCE_BOUNDS.idleMax)
      .default(INSTANCE_BOUNDS.idleFallback)
      .describe(
        "Seconds a directory (a repository or a worktree lane) may go without a delegation before the shared " +
          "OpenCode server's instance for it is released (about 26 MB, 3 threads and 3 file descriptors each); one " +
          "with a running session is never released, and the next delegation there starts a new one (1..86400).",
      ),
    maxLiveInstances: z
      .number()
      .int()
      .min(1)
      .max(INSTANCE_BOUNDS.liveMax)
      .default(INSTANCE_BOUNDS.liveFallback)
      .describe(
        "How many directories each MCP server process keeps live on the shared OpenCode server; beyond it the " +
          "least recently used idle ones are released at once, never one with a running session (1..999).",
      ),
    serverRecycleMb: z
      .number()
      .int()
      .min(0)
      .max(RECYCLE_BOUNDS.max)
      .default(RECYCLE_BOUNDS.fallback)
      .describe(
        "Resident memory in MB above which the shared OpenCode server is restarted once it rests (no turn running " +
          "in any MCP server process and no session updated for instanceIdleSeconds); released instances give " +
          "back only part of theirs. The next delegation starts a fresh server; 0 never restarts it (0..1048576).",
      ),
    maxReportBytes: z
      .number()
      .int()
      .min(REPORT_BOUNDS.min)
      .max(REPORT_BOUNDS.max)
      .default(REPORT_BOUNDS.fallback)
      .describe(
        "The largest text block a scout or worker result returns to the parent; a longer report is cut, head and " +
          "tail kept, and read whole with session_output.",
      ),
    maxPatchBytes: z
      .number()
      .int()
      .min(PATCH_BYTES_BOUNDS.min)
      .max(PATCH_BYTES_BOUNDS.max)
      .default(PATCH_BYTES_BOUNDS.fallback)
      .describe(
        "The largest patch an isolated worker's changes may make; a larger one is not stored, and the worker ends " +
          "needs_review with its worktree kept for inspection (patch_discard removes it).",
      ),
    maxTokensPerTask: z
      .number()
      .int()
      .min(TOKEN_CAP_MIN)
      .optional()
      .describe(
        "Stops a task once it has used more tokens than this (input, output, reasoning and cache, summed over its " +
          "steps in every session and turn); it ends failed with error_kind budget. Absent: no cap.",
      ),
    maxCostPerTask: z
      .number()
      .positive()
      .optional()
      .describe(
        "Stops a task once its cost over every session and turn, at OpenCode's model prices, passes this; it ends " +
          "failed with error_kind budget. Absent: no cap.",
      ),
    retentionIntervalSeconds: z
      .number()
      .int()
      .min(RETENTION_INTERVAL_BOUNDS.min)
      .max(RETENTION_INTERVAL_BOUNDS.max)
      .default(RETENTION_INTERVAL_BOUNDS.fallback)
      .describe(
        "How often every long-lived process (the MCP server, its watchdog) runs a retention pass: parked sessions " +
          "after a day, finished records after a week, applied patches, groups, tombstones and set-aside files " +
          "after a week (1..86400).",
      ),
    retentionPerPass: z
      .number()
      .int()
      .min(RETENTION_PER_PASS_BOUNDS.min)
      .max(RETENTION_PER_PASS_BOUNDS.max)
      .default(RETENTION_PER_PASS_BOUNDS.fallback)
      .describe(
        "The most removals (a session, a record, a file, a patch) one retention pass makes; the rest waits for the " +
          "next pass (1..100000).",
      ),
    policy: PolicySchema.default({ requireTier: false, relay: [], respondWaitSeconds: 600 }).describe(
      "Delegation policy; absent means blueprint mode with the tier optional and nothing relayed.",
    ),
    roles: RolesSchema.default({}).describe(
      "Roles the parent may pass as `role` to scout (read-only ones) or worker (write ones), by name.",
    ),
    claudeAgents: ClaudeAgentsSchema.default({ user: true, workspaces: [] }).describe(
      "Which Claude Code subagent files (.claude/agents/*.md) are read as roles.",
    ),
  })
  .strict()

export type Config = z.infer<typeof ConfigSchema>
export type ConfigInput = z.input<typeof ConfigSchema>
export type StepLimits = Record<Role, number>
export type TimeoutLimits = Record<Role | "parent", number>

export const defaultConfig = (): Config => ConfigSchema.parse({ version: 1 })

export function stepLimits(config: Config): StepLimits {
  const chosen = config.stepLimits ?? { profile: "standard" }
  if (chosen.profile === "custom") return { scout: chosen.scout, worker: chosen.worker, runner: chosen.runner }
  return { ...STEP_PROFILES[chosen.profile] }
}

export function timeoutLimits(config: Config): TimeoutLimits {
  const chosen = config.timeoutLimits ?? {
    profile: config.stepLimits?.profile === "extended" ? "extended" : "standard",
  }
  if (chosen.profile === "custom")
    return { scout: chosen.scout, worker: chosen.worker, runner: chosen.runner, parent: chosen.parent }
  return { ...TIMEOUT_PROFILES[chosen.profile] }
}

/** The models config.json routes `role` to, in the order they are tried (none: OpenCode's default). */
export function roleModels(config: Pick<Config, "models">, role: Role): string[] {
  const chosen = config.models[role]
  return chosen === undefined ? [] : typeof chosen === "string" ? [chosen] : [...chosen]
}

/** Steps reserved at the end of a run for writing the report: 20%, at least 2. */
export const reserveSteps = (limit: number) => Math.max(2, Math.ceil(limit * 0.2))
