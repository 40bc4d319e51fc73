// What a task record on disk must hold for every reader (task_list, task_status, task_result, stats,
// recovery) to use it without a check of its own: the fields they read, with the types they assume,
// the result's numbers included, and dates that parse. A record that fails is set aside
// (util/state-file.ts), never a reason a listing or a sum fails for the other tasks.
import { z } from "zod"
import { ROLES } from "../../config/bounds"
import { MODES } from "../../policy/mode"
import { isDate } from "../../util/state-file"
import { STATUSES } from "./tasks"
import { CHANGE_KINDS } from "../../workspace/change-kind"
import { FallbackSchema, RouteSchema, SpendingSchema, TokensSchema } from "./usage"

const date = z.string().refine(isDate, "not a date")
const count = z.number().nonnegative()

const PatchFileSchema = z.looseObject({ path: z.string(), change: z.enum(CHANGE_KINDS) })

/** The fields of a DelegationResult that the ledger, task_result and task_status read. */
const ResultSchema = z.looseObject({
  status: z.enum(STATUSES),
  role: z.enum(ROLES),
  report: z.string(),
  model: z.string().optional(),
  steps: count,
  tokens: TokensSchema,
  cost: count,
  durationMs: count,
  workspace: z.string(),
  tools: z.array(z.looseObject({ tool: z.string() })),
  files: z.array(z.looseObject({ path: z.string(), change: z.string() })).optional(),
  patch: z
    .looseObject({
      id: z.string(),
      digest: z.string(),
      files: z.array(PatchFileSchema),
      summary: z.string(),
      bytes: count,
    })
    .optional(),
  run: z
    .looseObject({
      exitCode: z.number().nullable(),
      log: z.string(),
      timedOut: z.boolean(),
      lines: z.number().optional(),
    })
    .optional(),
  warnings: z.array(z.string()).optional(),
  commands: z.array(z.looseObject({ command: z.string(), exitCode: z.number().optional() })),
  error: z.string().optional(),
  next: z.string().optional(),
  bytes: z.looseObject({ transcript: count, logs: count, returned: count, keptOut: count }).optional(),
})

export const RecordSchema = z.looseObject({
  version: z.literal(1),
  id: z.string(),
  role: z.enum(ROLES),
  agent: z.string(),
  workspace: z.string().startsWith("/"),
  title: z.string(),
  writable: z.boolean(),
  status: z.enum(STATUSES),
  idempotencyKey: z.string().optional(),
  sessionID: z.string().optional(),
  sessions: z.array(z.string()),
  route: z.looseObject({ providerID: z.string(), modelID: z.string(), variant: z.string().optional() }).optional(),
  // The routes left to try and the ones left behind (fallback.ts): the next turn and the ledger read them.
  fallbacks: z.array(RouteSchema).optional(),
  fallbackFrom: z.array(FallbackSchema).optional(),
  ownerPid: z.number().int(),
  ownerStart: z.string().optional(),
  createdAt: date,
  turnStartedAt: date.optional(),
  updatedAt: date,
  finishedAt: date.optional(),
  resultReadAt: date.optional(),
  deadline: z.number(),
  operationMs: z.number(),
  brief: z.string().optional(),
  turns: z.number().int(),
  revision: z.number().int(),
  progress: z.array(z.string()),
  activity: z
    .looseObject({ step: z.number(), tool: z.string().optional(), target: z.string().optional(), at: date })
    .optional(),
  snapshot: z
    .looseObject({
      git: z.boolean(),
      entries: z.record(z.string(), z.looseObject({ status: z.string(), hash: z.string() })),
      since: z.number().optional(),
    })
    .optional(),
  // Where a continue runs and whose worktree it must still own (isolation.ts checkOwnWorktree).
  isolation: z
    .looseObject({ mode: z.literal("worktree"), source: z.string().startsWith("/"), patchId: z.string() })
    .optional(),
  // The command settle runs on the result after each turn (verify.ts).
  verify: z.string().optional(),
  // The parent's globs of more files the verification holds as they were before the worker (definitions.ts).
  verifyFrozen: z.array(z.string()).optional(),
  // The schema every turn's final answer is checked against (output-schema.ts); re-checked when read.
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  // The paths a worker may change, checked after each turn (scope.ts).
  scope: z.array(z.string()).optional(),
  // What a review looked at, named in its result (review-cwd.ts).
  reviewed: z
    .looseObject({
      patchId: z.string().optional(),
      cwd: z.string().optional(),
      files: z.array(PatchFileSchema).optional(),
      more: count.optional(),
    })
    .optional(),
  // A delegate_parallel member: its first turn counts against maxParallel in whichever process follows it.
  parallel: z.literal(true).optional(),
  // What a continue compares its mode to and takes a runner's access from (lifecycle.ts).
  calls: z
    .array(
      z.looseObject({
        turn: z.number().int(),
        mode: z.enum(MODES),
        source: z.string(),
        delegation: z.looseObject({ role: z.enum(ROLES) }),
      }),
    )
    .optional(),
  turnWarnings: z.array(z.string()).optional(),
  autorun: z.record(z.string(), z.string()).optional(),
  result: ResultSchema.optional(),
  // The task's running total over every session (usage.ts): what its result, stats and caps count.
  spending: SpendingSchema.optional(),
  note: z.string().optional(),
})
