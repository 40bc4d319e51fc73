// delegate_parallel: up to 16 scouts and worktree workers started at once as one group, run under the
// machine-wide concurrency cap (engine/slots.ts), followed together within the sync budget. A group
// still running is followed again by calling the tool with its group_id (one tool, one result shape:
// the parent never has to merge per-task answers), and cancelled as a whole the same way (cancel: true)
// or by cancelling the call.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"
import { agentName } from "../../agents/names"
import { newGroupId, readGroup, saveGroup } from "../../engine/groups"
import type { Delegations } from "../../engine/lifecycle"
import type { CallPolicy } from "../../engine/policy"
import { STATUSES } from "../../engine/result"
import { isFinished, type TaskRecord } from "../../engine/tasks"
import { describe, fail } from "../../errors"
import type { Delegation } from "../../policy/mode"
import { patchOutline } from "../../workspace/patch"
import { loadPatch } from "../../workspace/patches"
import { overlaps } from "../../workspace/overlap"
import { syncBudget } from "../calls"
import {
  errorResult,
  mechanicalArg,
  modelArgs,
  policyArgs,
  progressReporter,
  resultShape,
  toStructured,
  type Extra,
} from "../shared"
import description from "./delegate_parallel.md" with { type: "text" }

export const MAX_BRIEFS = 16

const briefSchema = z.object({
  role: z.enum(["scout", "worker"]).describe("worker: always isolated."),
  cwd: z.string().min(1),
  task: z.string().min(1),
  ...modelArgs,
  ...mechanicalArg,
})

const memberShape = z.object({
  index: z.number().describe("The brief's position in briefs, from 0."),
  task_id: z.string().optional(),
  role: z.string(),
  status: z.enum(STATUSES),
  report: z.string(),
  patch: resultShape.patch,
  files_changed: resultShape.files_changed,
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

export function registerDelegateParallel(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "delegate_parallel",
    {
      title: "Parallel scouts and isolated workers",
      description,
      inputSchema: {
        briefs: z.array(briefSchema).min(1).max(MAX_BRIEFS).optional().describe("To start a group."),
        group_id: z.string().min(1).optional().describe("To follow a group instead."),
        cancel: z.boolean().optional().describe("With group_id: cancel it."),
        ...policyArgs,
      },
      outputSchema: outputShape,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    async (args, extra) => {
      try {
        if ((args.briefs === undefined) === (args.group_id === undefined))
          throw fail("Usage", "Pass either briefs (to start a group) or group_id (to follow one), not both or neither.")
        if (args.group_id) {
          const group = await readGroup(delegations.runtime.paths.groupsDir, args.group_id)
          // A member that cannot be cancelled (its record gone) is shown as it is by the answer below.
          if (args.cancel) await Promise.all(group.tasks.map((id) => delegations.cancel(id).catch(() => undefined)))
          return await followGroup(
            server,
            delegations,
            group.id,
            await Promise.all(group.tasks.map((id, index) => member(delegations, index, id))),
            extra,
          )
        }
        const briefs = args.briefs ?? []
        // Every brief passes the policy before any starts: a refusal leaves nothing running.
        // Every brief passes the policy gate before any starts: a refusal leaves nothing running (each
        // start passes it again, the same gate).
        const policies = briefs.map((brief) => memberPolicy(brief, args))
        for (const [index, brief] of briefs.entries()) await delegations.check({ ...policies[index]!, cwd: brief.cwd })
        const started = await Promise.all(briefs.map((brief, i) => startMember(delegations, brief, i, policies[i]!)))
        const groupId = newGroupId()
        await saveGroup(delegations.runtime.paths.groupsDir, {
          version: 1,
          id: groupId,
          createdAt: new Date().toISOString(),
          tasks: started.flatMap((entry) => (entry.task_id ? [entry.task_id] : [])),
        })
        return await followGroup(server, delegations, groupId, started, extra)
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}

/** What a member states for the policy gate: the group's tier and mode, its own role and task. */
function memberPolicy(brief: Brief, group: Pick<CallPolicy, "mode" | "tier">): CallPolicy {
  const mechanical = brief.mechanical === true
  const delegation: Delegation = brief.role === "worker" ? { role: "worker", mechanical } : { role: "scout" }
  return { mode: group.mode, tier: group.tier, delegation, texts: { task: brief.task } }
}

type Brief = z.infer<typeof briefSchema>

async function startMember(delegations: Delegations, brief: Brief, index: number, policy: CallPolicy): Promise<Member> {
  try {
    const { record } = await delegations.start({
      role: brief.role,
      agent: agentName(brief.role),
      cwd: brief.cwd,
      brief: brief.task,
      title: `${brief.role}: ${brief.task.split("\n")[0]!.slice(0, 60)}`,
      model: brief.model,
      variant: brief.variant,
      writable: brief.role === "worker",
      policy,
      // Parallel writers never share a tree: each edits its own snapshot and returns a patch.
      isolation: brief.role === "worker" ? "worktree" : undefined,
      queued: true,
    })
    return memberOf(index, record)
  } catch (error) {
    return { index, role: brief.role, status: "failed", report: "", error: `Not started: ${describe(error)}` }
  }
}

async function member(delegations: Delegations, index: number, id: string): Promise<Member> {
  const record = await delegations.read(id)
  return record
    ? memberOf(index, record)
    : { index, task_id: id, role: "unknown", status: "failed", report: "", error: "The task's record is gone." }
}

function memberOf(index: number, record: TaskRecord): Member {
  if (!record.result || !isFinished(record.status))
    return {
      index,
      task_id: record.id,
      role: record.role,
      status: record.status,
      report: record.progress.at(-1) ?? "",
      progress: record.progress.slice(-5),
    }
  const out = toStructured(record.result)
  const { task_id, status, report, patch, files_changed, error, error_kind, next, warnings } = out
  return { index, task_id, role: record.role, status, report, patch, files_changed, error, error_kind, next, warnings }
}

/** Waits for every started member within the sync budget; a cancelled call cancels every member. */
async function followGroup(
  server: McpServer,
  delegations: Delegations,
  groupId: string,
  members: Member[],
  extra: Extra,
): Promise<CallToolResult> {
  const budgetMs = await syncBudget(server, delegations)
  const ids = members.flatMap((entry) => (entry.task_id ? [entry.task_id] : []))
  const onAbort = () =>
    // Deferred as in calls.ts followTask: a closing connection aborts every handler too.
    setTimeout(() => {
      if (server.isConnected()) for (const id of ids) void delegations.cancel(id).catch(() => undefined)
    }, 0)
  extra.signal.addEventListener("abort", onAbort, { once: true })
  const report = progressReporter(extra)
  try {
    const final = await Promise.all(
      members.map(async (entry) => {
        if (!entry.task_id || isFinished(entry.status)) return entry
        const record = await delegations.follow(entry.task_id, {
          budgetMs,
          signal: extra.signal,
          onProgress: (line) => report(`[${entry.index}] ${line}`),
        })
        return record ? memberOf(entry.index, record) : entry
      }),
    )
    return groupResult(delegations, groupId, final)
  } finally {
    extra.signal.removeEventListener("abort", onAbort)
  }
}

async function groupResult(delegations: Delegations, groupId: string, tasks: Member[]): Promise<CallToolResult> {
  const running = tasks.some((entry) => !isFinished(entry.status))
  const patches = await Promise.all(
    tasks
      .flatMap((entry) => (entry.patch && entry.task_id ? [{ owner: entry.task_id, id: entry.patch.patch_id }] : []))
      .map(async ({ owner, id }) => {
        // A patch discarded since is simply not compared.
        const loaded = await loadPatch(delegations.runtime.paths.patchesDir, id).catch(() => undefined)
        return loaded && { owner, text: await patchOutline(Bun.file(loaded.file).stream()) }
      }),
  )
  const found = overlaps(patches.filter((patch) => patch !== undefined)).map((overlap) => ({
    path: overlap.path,
    task_ids: overlap.owners,
  }))
  const next = running
    ? `Some members are still queued or running. Call delegate_parallel with group_id "${groupId}" to wait for them (task_status takes each task_id), or with cancel: true as well to stop them all.`
    : found.length
      ? "Review the patches with patch_show. Patches listed in overlaps change the same lines: apply one of them, then review or rerun the others on the result. Apply the rest with patch_apply and their digest."
      : "Review each patch with patch_show and apply it with patch_apply and its digest; they do not overlap, so any order works."
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
    return `[${entry.index}] ${entry.task_id ?? "-"} ${entry.role} ${entry.status}${patch}: ${(entry.error ?? entry.report).split("\n")[0]!.slice(0, 200)}`
  })
  const overlapLines = found.map((overlap) => `overlap: ${overlap.path} changed by ${overlap.task_ids.join(", ")}`)
  return {
    content: [
      {
        type: "text",
        text: [`group ${groupId}: ${structured.status}`, ...lines, ...overlapLines, `next: ${next}`].join("\n"),
      },
    ],
    structuredContent: structured,
  }
}
