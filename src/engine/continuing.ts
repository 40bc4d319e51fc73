// task_continue as the lifecycle runs it: one turn at a time per task, in this process and across
// processes (the task's claim, owners.ts), then what a new call passes (continue-check.ts) and the turn's
// launch under the writer state.
import { fail } from "../errors"
import type { Relay } from "../policy/relay"
import { admitContinue, type ContinuePolicy, continuedTurn, checkOwnWorktree } from "./admission"
import { type Runs, acquireWriter, launchTurn } from "./runs"
import { refuseHostUnready, type Runtime } from "./capacity"
import { checkContinuable, type TaskRecord } from "./records"

/** What continuing a task needs of the lifecycle. */
export interface ContinueDeps {
  runs: Runs
  runtime: Runtime
  /** Task ids whose task_continue is between its checks and its launch, in this process. */
  continuing: Set<string>
  /** This process recovers tasks: a dead holder's writer state is reconciled when a writer takes it (launching.ts). */
  recovers: boolean
}

export interface ContinueCall {
  timeoutMs?: number
  relay?: Relay
  call: ContinuePolicy
}

/** Starts the rework's turn, or refuses it before anything changes, saying why and what to do. */
export async function continueTask(deps: ContinueDeps, id: string, brief: string, call: ContinueCall) {
  const { runs } = deps
  // Two task_continue calls for one task must not both start a turn: the second is refused.
  if (runs.live.has(id) || deps.continuing.has(id))
    throw fail(
      "Usage",
      `Task ${id} is already running a turn.`,
      "Wait for it with task_status (wait_seconds), or task_cancel it first.",
    )
  deps.continuing.add(id)
  try {
    // Under the task's claim (owners.ts): another process continuing or taking it over refuses this one.
    if (!(await runs.owners.claim(id)))
      throw fail(
        "Usage",
        `Task ${id} is already running a turn in another MCP server process.`,
        "Wait for it with task_status (wait_seconds), or task_cancel it first.",
      )
    try {
      return await continueClaimed(deps, id, brief, call)
    } catch (error) {
      // Refused before its turn started: the claim goes with the refusal.
      if (!runs.live.has(id)) await runs.owners.release(id).catch(() => undefined)
      throw error
    }
  } finally {
    deps.continuing.delete(id)
  }
}

/** task_continue under the task's claim, which its launched turn keeps until it settles. */
async function continueClaimed(deps: ContinueDeps, id: string, brief: string, call: ContinueCall): Promise<TaskRecord> {
  const { runs } = deps
  await refuseHostUnready(deps.runtime)
  const record = await runs.store.read(id)
  checkContinuable(record, id)
  const admitted = await admitContinue(deps.runtime, record, brief, call.timeoutMs, call.call)
  if (record.writable) await acquireWriter(deps.runs, record.workspace, id, deps.recovers)
  try {
    // Again under the writer state: a patch_discard that finished meanwhile has freed the lane.
    await checkOwnWorktree(deps.runtime, record)
  } catch (error) {
    if (record.writable) await runs.locks.clear(record.workspace, id)
    throw error
  }
  // Written by the launch, with the workspace's state.
  void runs.store.update(record, continuedTurn(record, brief, admitted), { deferred: true })
  await launchTurn(runs, record, brief, admitted.host, call.relay)
  return record
}
