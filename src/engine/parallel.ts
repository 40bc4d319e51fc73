// The delegate_parallel use case behind the engine's surface: a group of scouts and isolated workers
// passes the policy gate as a whole before any member starts, is saved (groups.ts) so that any process
// can follow or cancel it by its id, is followed together, and its finished workers' patches are
// compared for changes to the same lines.
import { agentName } from "../agents/names"
import { AppError, describe, fail } from "../errors"
import type { Delegation } from "../policy/mode"
import { patchOutline, loadPatch, overlaps } from "../workspace/patches"
import { checkScope } from "../workspace/scope"
import { newGroupId, readGroup, saveGroup, isFinished, type PolicyDecision, type TaskRecord } from "./records"
import { checkOutputSchema, checkVerify } from "./outcome"
import type { CallPolicy, PolicyRequest, StartRequest } from "./admission"
import type { Runtime } from "./capacity"
import type { FollowOptions } from "./runs"

export interface GroupBrief {
  role: "scout" | "worker"
  cwd: string
  task: string
  model?: string
  variant?: string
  mechanical?: boolean
  /** As the single calls take them (request.ts): a schema for scouts and workers, the rest for workers. */
  outputSchema?: unknown
  verify?: string
  scope?: string[]
}

/** One brief of a group: its task as known now, or why it has none. */
export interface GroupMember {
  /** The brief's position in the group, from 0. */
  index: number
  role: string
  taskId?: string
  record?: TaskRecord
  /** Why there is no record: it was not started, or its record is gone. */
  error?: string
}

export interface Group {
  id: string
  members: GroupMember[]
}

export interface GroupOverlap {
  path: string
  taskIds: string[]
}

/** What the group use cases need of the lifecycle (Delegations provides it). */
export interface GroupDeps {
  runtime: Runtime
  check(request: PolicyRequest): Promise<PolicyDecision>
  start(request: StartRequest): Promise<{ record: TaskRecord }>
  read(id: string): Promise<TaskRecord | undefined>
  cancel(id: string): Promise<unknown>
  follow(id: string, options: FollowOptions): Promise<TaskRecord | undefined>
}

export interface GroupFollow {
  budgetMs: number
  signal: AbortSignal
  /** A member's progress line, as it comes. */
  onProgress?: (index: number, line: string) => void
  /** Asked when the signal aborts: true cancels every member (the caller's connection still stands). */
  cancelOnAbort?: () => boolean
}

/** What a member states for the policy gate: the group's tier and mode, its own role and task. Pure. */
function memberPolicy(brief: GroupBrief, group: Pick<CallPolicy, "mode" | "tier">): CallPolicy {
  const mechanical = brief.mechanical === true
  const delegation: Delegation = brief.role === "worker" ? { role: "worker", mechanical } : { role: "scout" }
  return { mode: group.mode, tier: group.tier, delegation, texts: { task: brief.task } }
}

/**
 * Refuses a brief the single call would refuse, with the same checks, naming its position; a scout with
 * a worker's verify or scope is refused rather than ignored. Pure.
 */
function checkBrief(brief: GroupBrief, index: number): void {
  try {
    const extra =
      brief.role === "worker" ? [] : (["verify", "scope"] as const).filter((key) => brief[key] !== undefined)
    if (extra.length)
      throw fail(
        "Usage",
        `a scout takes no ${extra.join(" or ")}: only a worker changes files.`,
        `Drop ${extra.join(" and ")} from this brief, or make it a worker.`,
      )
    checkVerify(brief.verify)
    checkOutputSchema(brief.outputSchema)
    checkScope(brief.scope)
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    throw fail(error.kind, `briefs[${index}]: ${error.message}`, error.hint, error.data)
  }
}

/**
 * What the parent does next with a group, from where its members stand: members needing review first
 * (a failing verify, a change outside the scope, an answer off its schema: each member's own next says
 * which), then waiting while some still run, else reviewing and applying the patches, overlapping ones
 * one at a time. Pure; the single call's next is decided in the engine too (result.ts).
 */
export function groupNext(group: {
  id: string
  running: boolean
  needsReview: number[]
  overlapping: boolean
}): string {
  const first = group.needsReview.length
    ? `Members ${group.needsReview.join(", ")} need review: read their warnings and next first. `
    : ""
  const then = group.running
    ? `Some members are still queued or running. Call delegate_parallel with group_id "${group.id}" to wait for ` +
      "them (task_status takes each task_id), or with cancel: true as well to stop them all."
    : group.overlapping
      ? "Review the patches with patch_show. Patches listed in overlaps change the same lines: apply one of them, " +
        "then review or rerun the others on the result. Apply the rest with patch_apply and their digest."
      : "Review each patch with patch_show and apply it with patch_apply and its digest; " +
        "they do not overlap, so any order works."
  return first + then
}

export class Groups {
  constructor(private readonly deps: GroupDeps) {}

  /** Starts every brief once all of them pass the policy gate, and saves the group. */
  async start(briefs: GroupBrief[], group: Pick<CallPolicy, "mode" | "tier">): Promise<Group> {
    // Every brief passes its checks and the policy gate before any starts: a refusal leaves nothing
    // running and no record (each start passes them again, the same checks).
    for (const [index, brief] of briefs.entries()) checkBrief(brief, index)
    const policies = briefs.map((brief) => memberPolicy(brief, group))
    for (const [index, brief] of briefs.entries()) await this.deps.check({ ...policies[index]!, cwd: brief.cwd })
    const members = await Promise.all(briefs.map((brief, i) => this.startMember(brief, i, policies[i]!)))
    const id = newGroupId()
    await saveGroup(this.deps.runtime.paths.groupsDir, {
      version: 1,
      id,
      createdAt: new Date().toISOString(),
      tasks: members.flatMap((member) => (member.taskId ? [member.taskId] : [])),
    })
    return { id, members }
  }

  /** The saved group `id` with each member's task as known now; with `cancel`, every member cancelled first. */
  async open(id: string, options: { cancel?: boolean } = {}): Promise<Group> {
    const group = await readGroup(this.deps.runtime.paths.groupsDir, id)
    // A member that cannot be cancelled (its record gone) is shown as it is by the answer below.
    if (options.cancel) await Promise.all(group.tasks.map((task) => this.deps.cancel(task).catch(() => undefined)))
    const members = await Promise.all(
      group.tasks.map(async (taskId, index): Promise<GroupMember> => {
        const record = await this.deps.read(taskId)
        return record
          ? { index, role: record.role, taskId, record }
          : { index, role: "unknown", taskId, error: "The task's record is gone." }
      }),
    )
    return { id: group.id, members }
  }

  /** Waits for every running member within the budget; an aborted wait cancels them when asked to. */
  async follow(members: GroupMember[], options: GroupFollow): Promise<GroupMember[]> {
    const ids = members.flatMap((member) => (member.taskId ? [member.taskId] : []))
    const onAbort = () =>
      // Deferred as in calls.ts followTask: a closing connection aborts every handler too.
      setTimeout(() => {
        if (options.cancelOnAbort?.() ?? true) for (const id of ids) void this.deps.cancel(id).catch(() => undefined)
      }, 0)
    options.signal.addEventListener("abort", onAbort, { once: true })
    try {
      return await Promise.all(
        members.map(async (member) => {
          if (!member.taskId || !member.record || isFinished(member.record.status)) return member
          const record = await this.deps.follow(member.taskId, {
            budgetMs: options.budgetMs,
            signal: options.signal,
            onProgress: (line) => options.onProgress?.(member.index, line),
          })
          return record ? { ...member, record } : member
        }),
      )
    } finally {
      options.signal.removeEventListener("abort", onAbort)
    }
  }

  /** Files two or more finished workers' patches change at the same lines. */
  async overlaps(members: GroupMember[]): Promise<GroupOverlap[]> {
    const dir = this.deps.runtime.paths.patchesDir
    const patches = await Promise.all(
      members.map(async (member) => {
        const id = member.record && isFinished(member.record.status) ? member.record.result?.patch?.id : undefined
        if (!id || !member.taskId) return undefined
        // A patch discarded since is simply not compared.
        const loaded = await loadPatch(dir, id).catch(() => undefined)
        return loaded && { owner: member.taskId, text: await patchOutline(Bun.file(loaded.file).stream()) }
      }),
    )
    return overlaps(patches.filter((patch) => patch !== undefined)).map((overlap) => ({
      path: overlap.path,
      taskIds: overlap.owners,
    }))
  }

  private async startMember(brief: GroupBrief, index: number, policy: CallPolicy): Promise<GroupMember> {
    try {
      const { record } = await this.deps.start({
        role: brief.role,
        agent: agentName(brief.role),
        cwd: brief.cwd,
        brief: brief.task,
        title: `${brief.role}: ${brief.task.split("\n")[0]!.slice(0, 60)}`,
        model: brief.model,
        variant: brief.variant,
        writable: brief.role === "worker",
        policy,
        verify: brief.verify,
        outputSchema: brief.outputSchema,
        scope: brief.scope,
        // Parallel writers never share a tree: each edits its own snapshot and returns a patch.
        isolation: brief.role === "worker" ? "worktree" : undefined,
        queued: true,
      })
      return { index, role: brief.role, taskId: record.id, record }
    } catch (error) {
      return { index, role: brief.role, error: `Not started: ${describe(error)}` }
    }
  }
}
