// What a task_continue passes before its turn starts, as a new call would: the policy gate for the
// rework (the task's role, as its first call stated it), the spending caps over the whole task, a
// budget, and admission of its workspace again (an isolated task's own worktree still). And the edit
// that starts the turn once the writer state is held (lifecycle.ts).
import { timeoutLimits } from "../../config/schema"
import { fail } from "../../errors"
import { weakenedMode, type Delegation } from "../../policy/mode"
import type { HostContext } from "../../sandbox"
import { canonicalWorkspace } from "../../workspace/root"
import { planBudget } from "./budgets"
import { checkOwnWorktree, checkSamePlace } from "./isolation"
import { gatePolicy, missingMarkerWarning, type CallPolicy } from "./policy"
import { nextTurn, type PolicyDecision, type TaskRecord, overCap, spendingOf, totalOf } from "../records"
import type { Runtime } from "../capacity"

/** What a task_continue states for the policy gate: as a new call would, except where it runs. */
export type ContinuePolicy = Pick<CallPolicy, "mode" | "tier"> & { mechanical?: boolean }

export interface Admitted {
  decision: PolicyDecision
  operationMs: number
  host: HostContext
}

/** Refuses the continue, saying why and what to do, unless it passes what a new call passes. */
export async function admitContinue(
  runtime: Runtime,
  record: TaskRecord,
  brief: string,
  timeoutMs: number | undefined,
  call: ContinuePolicy,
): Promise<Admitted> {
  // A review (review.ts) ran in a patch's worktree, admitted to its start only (admission refuses it here anyway).
  if (!record.isolation && record.workspace.startsWith(`${runtime.paths.worktreesDir}/`))
    throw fail(
      "Usage",
      `Task ${record.id} reviewed a patch in its worktree; a review is not continued.`,
      "Call review again with the same patch_id and the follow-up in its brief.",
    )
  // Where a new call for this task would run: the caller's workspace, not an isolated task's copy.
  const source = record.isolation?.source ?? record.workspace
  const delegation = reworkDelegation(record, call.mechanical)
  const decision = await gatePolicy(runtime, {
    mode: call.mode,
    tier: call.tier,
    delegation,
    texts: { task: brief },
    cwd: source,
  })
  const config = await runtime.config()
  // The caps count the whole task: a turn that would stop at its first step is refused before it starts.
  const over = overCap(totalOf(spendingOf(record)), { tokens: config.maxTokensPerTask, cost: config.maxCostPerTask })
  if (over)
    throw fail(
      "Usage",
      `Task ${record.id} cannot take another turn: ${over}, over all its turns and sessions.`,
      "Start a new worker or scout task with the rework as its brief (a new task counts from zero), " +
        "or raise the cap in config.json.",
    )
  const budget = planBudget({
    operation: `task_continue (${record.role})`,
    role: record.role,
    limits: timeoutLimits(config),
    bridgeTimeoutMs: runtime.flags.bridgeTimeoutMs,
    overrideMs: timeoutMs,
  })
  // Admitted again, as a new call's cwd would be: the previous turn may have planted project
  // plugins there, or config.json changed since.
  const host = runtime.host(config)
  if (record.isolation) {
    checkSamePlace(record, source, await canonicalWorkspace(source, host, config))
    await checkOwnWorktree(runtime, record)
  }
  const owner = record.isolation && { ...host, worktrees: { ...host.worktrees!, owner: record.isolation.patchId } }
  checkSamePlace(
    record,
    record.workspace,
    await canonicalWorkspace(record.workspace, owner ?? host, config, record.isolation !== undefined),
  )
  return { decision, operationMs: budget.operationMs, host }
}

/** The edit (TaskStore.update) that starts the continued turn, its call kept and a weakened mode said. */
export function continuedTurn(record: TaskRecord, brief: string, admitted: Admitted) {
  const { decision, operationMs } = admitted
  const { missingMarkers, ...call } = decision
  const weakened = weakenedMode(record.calls?.at(-1), call)
  const warnings = [...(weakened ? [weakened] : []), ...(missingMarkers ? [missingMarkerWarning(missingMarkers)] : [])]
  return (r: TaskRecord) => {
    nextTurn(r, brief, operationMs)
    r.calls = [...(r.calls ?? []), { ...call, turn: r.turns }]
    if (warnings.length) r.turnWarnings = warnings
  }
}

/**
 * The delegation a task's rework asks for: its role's, as its first call stated it (a runner keeps
 * its access and network). A worker's rework is mechanical only when the continue says so: whether a
 * change is mechanical is the parent's statement about each brief, and a new brief needs a new one.
 */
function reworkDelegation(record: TaskRecord, mechanical: boolean | undefined): Delegation {
  if (record.role === "worker") return { role: "worker", mechanical: mechanical === true }
  if (record.role === "scout") return { role: "scout" }
  const first = record.calls?.[0]?.delegation
  if (first?.role === "runner") return first
  // A record written before calls were kept: the runner's agent names its access and network.
  const networkAccess = record.agent.endsWith("network") ? "host" : "disabled"
  return { role: "runner", workspaceAccess: record.writable ? "writable" : "read_only", networkAccess }
}
