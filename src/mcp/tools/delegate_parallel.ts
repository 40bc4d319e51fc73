// delegate_parallel: up to 16 scouts and worktree workers started at once as one group, run under the
// machine-wide concurrency cap (engine/capacity/slots.ts), followed together within the sync budget. A group
// still running is followed again by calling the tool with its group_id (one tool, one result shape:
// the parent never has to merge per-task answers), and cancelled as a whole the same way (cancel: true)
// or by cancelling the call.
import { z } from "zod"
import type { Delegations, Group, GroupMember, TaskRecord } from "../../engine"
import { MAX_BRIEFS, STATUSES, isFinished, fail } from "../../engine/terms"
import { syncBudgetLeft } from "../calls"
import { defineTool, type Engine, type Peer } from "../define"
import { type Reply, progressReporter, type Extra } from "../replies"
import { mechanicalArg, memberArgs, modelArgs, policyArgs, resultShape, toStructured } from "../shared"
import description from "./delegate_parallel.md" with { type: "text" }

const briefSchema = z.object({
  role: z.enum(["scout", "worker"]).describe("worker: always isolated."),
  cwd: z.string().min(1),
  task: z.string().min(1),
  ...modelArgs,
  ...mechanicalArg,
  ...memberArgs,
})

const memberShape = z.object({
  index: z.number().describe("The brief's position in briefs, from 0."),
  task_id: z.string().optional(),
  role: z.string(),
  status: z.enum(STATUSES),
  report: z.string(),
  patch: resultShape.patch,
  files_changed: resultShape.files_changed,
  out_of_scope: resultShape.out_of_scope,
  verification: resultShape.verification,
  output: resultShape.output,
  output_error: resultShape.output_error,
  error: z.string().optional(),
  error_kind: resultShape.error_kind,
  next: z.string().optional(),
  warnings: z.array(z.string()).optional(),
  progress: z.array(z.string()).optional().describe("A running member's latest progress lines."),
})
type Member = z.infer<typeof memberShape>

const outputShape = {
  group_id: z
    .string()
    .describe("Pass it back as group_id to wait for the rest (with cancel: true to cancel every member)."),
  status: z
    .enum(["finished", "running"])
    .describe("finished once every member has; running while any is queued or working."),
  tasks: z.array(memberShape),
  overlaps: z
    .array(z.object({ path: z.string(), task_ids: z.array(z.string()) }))
    .describe("Files two or more finished workers' patches change at the same lines."),
  next: z.string(),
}

export const delegateParallel = defineTool({
  name: "delegate_parallel",
  title: "Parallel scouts and isolated workers",
  description,
  input: {
    briefs: z.array(briefSchema).min(1).max(MAX_BRIEFS).optional().describe("To start a group."),
    group_id: z.string().min(1).optional().describe("To follow a group instead."),
    cancel: z.boolean().optional().describe("With group_id: cancel it."),
    ...policyArgs,
  },
  output: outputShape,
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  run: async (args, { peer, delegations, engine, extra }) => {
    const arrivedAt = Date.now()
    if ((args.briefs === undefined) === (args.group_id === undefined))
      throw fail("Usage", "Pass either briefs (to start a group) or group_id (to follow one), not both or neither.")
    const group = args.group_id
      ? await delegations.groups.open(args.group_id, { cancel: args.cancel })
      : await delegations.groups.start(
          (args.briefs ?? []).map(({ output_schema, ...brief }) => ({ ...brief, outputSchema: output_schema })),
          args,
        )
    return await followGroup({ peer, delegations, engine, extra }, group, arrivedAt)
  },
})

/** A member as the result shows it: its task's state, or, once finished, its result's fields. */
function memberOf(member: GroupMember): Member {
  const { index, role, record } = member
  if (!record) return { index, task_id: member.taskId, role, status: "failed", report: "", error: member.error }
  return recordMember(index, record)
}

function recordMember(index: number, record: TaskRecord): Member {
  if (!record.result || !isFinished(record.status))
    return {
      index,
      task_id: record.id,
      role: record.role,
      status: record.status,
      report: record.progress.at(-1) ?? "",
      progress: record.progress.slice(-5),
    }
  // The single call's structured result, cut to the fields a member shows: derived once, in one place.
  return { index, role: record.role, ...pick(toStructured(record.result), MEMBER_FIELDS) }
}

const MEMBER_FIELDS = [
  "task_id",
  "status",
  "report",
  "patch",
  "files_changed",
  "out_of_scope",
  "verification",
  "output",
  "output_error",
  "error",
  "error_kind",
  "next",
  "warnings",
] as const

const pick = <T extends object, K extends keyof T>(from: T, keys: readonly K[]) =>
  Object.fromEntries(keys.map((key) => [key, from[key]])) as Pick<T, K>

/** Waits for every started member within the sync budget; a cancelled call cancels every member. */
async function followGroup(
  { peer, delegations, engine, extra }: { peer: Peer; delegations: Delegations; engine: Engine; extra: Extra },
  group: Group,
  arrivedAt: number,
): Promise<Reply<GroupOutput>> {
  const report = progressReporter(extra)
  const members = await delegations.groups.follow(group.members, {
    // Counted from the call's arrival: starting the members was spent from it (calls.ts syncBudgetLeft).
    budgetMs: await syncBudgetLeft(peer, delegations, arrivedAt),
    signal: extra.mcpReq.signal,
    onProgress: (index, line) => report(`[${index}] ${line}`),
    cancelOnAbort: () => peer.connected(),
  })
  for (const { record } of members) if (record) await delegations.resultRead(record)
  const found = (await delegations.groups.overlaps(members)).map((overlap) => ({
    path: overlap.path,
    task_ids: overlap.taskIds,
  }))
  return groupResult(engine, group.id, members.map(memberOf), found)
}

type GroupOutput = z.output<z.ZodObject<typeof outputShape>>

function groupResult(
  engine: Engine,
  groupId: string,
  tasks: Member[],
  found: GroupOutput["overlaps"],
): Reply<GroupOutput> {
  const running = tasks.some((entry) => !isFinished(entry.status))
  const needsReview = tasks.filter((entry) => entry.status === "needs_review").map((entry) => entry.index)
  const next = engine.groupNext({ id: groupId, running, needsReview, overlapping: found.length > 0 })
  const structured = {
    group_id: groupId,
    status: running ? ("running" as const) : ("finished" as const),
    tasks,
    overlaps: found,
    next,
  }
  const lines = tasks.map((entry) => {
    const patch = entry.patch
      ? ` · ${entry.patch.patch_id} (${entry.patch.files.length} files, digest ${entry.patch.digest})`
      : ""
    const line = (entry.error ?? entry.report).split("\n")[0]!.slice(0, 200)
    return `[${entry.index}] ${entry.task_id ?? "-"} ${entry.role} ${entry.status}${patch}: ${line}`
  })
  const overlapLines = found.map((overlap) => `overlap: ${overlap.path} changed by ${overlap.task_ids.join(", ")}`)
  const text = [`group ${groupId}: ${structured.status}`, ...lines, ...overlapLines, `next: ${next}`].join("\n")
  return { text, structured }
}
