// Putting a task's turn in motion once it passed its checks: the workspace's writer state taken (a
// holder whose process died reconciled first), then the task's claim, the workspace's state recorded
// with the record, and the turn run in the background (runs.ts). A failure on the way releases what
// was taken.
import { withOutputSchema, freezeInput } from "../outcome"
import { fail } from "../../errors"
import type { Relay } from "../../policy/relay"
import type { HostContext } from "../../sandbox"
import { autorunFiles, snapshot, clockPast, freezeDefinition } from "../../workspace/snapshot"
import type { Runs } from "./runs"
import { lockedError, orphaned } from "../capacity"
import { reconcileHolder } from "./recovery"
import type { TaskRecord } from "../records"

/**
 * Takes the writer state, reconciling a holder whose process died when this process recovers
 * (`reconcile`); refuses while anyone else holds it.
 */
export async function acquireWriter(runs: Runs, workspace: string, id: string, reconcile: boolean) {
  for (let attempt = 0; attempt < 2; attempt++) {
    const taken = await runs.locks.tryAcquire(workspace, id)
    if (taken.acquired) return
    // Even the task's own quarantined or preserved state holds: only a restart releases those.
    if (attempt === 0 && orphaned(taken.holder)) {
      if (reconcile) await reconcileHolder(runs, taken.holder)
      continue
    }
    throw lockedError(taken.holder, workspace)
  }
}

/** Records the workspace's state and the task, then runs its turn; a failure before then releases the writer state. */
export async function launchTurn(
  runs: Runs,
  record: TaskRecord,
  brief: string,
  host: HostContext,
  relay?: Relay,
  queued?: boolean,
) {
  try {
    // A new task's id is its own: the claim is taken at once, and given up when the task settles.
    if (!(await runs.owners.claim(record.id)))
      throw fail("Usage", `Task ${record.id} is driven by another MCP server process.`, "Call task_status for it.")
    const state = await snapshot(record.workspace, host)
    const autorun = record.writable ? await autorunFiles(record.workspace) : undefined
    // The check's definition before the worker touches it, at the task's start only (a continue's turn
    // is graded against the same): what its verification is graded on (verify.ts).
    if (record.verify && record.turns === 1)
      await freezeDefinition(freezeInput(runs.runtime.paths.frozenDir, record, host))
    const measured = (r: TaskRecord) => {
      r.snapshot = state
      if (autorun) r.autorun = autorun
    }
    await runs.store.update(record, measured, { quiet: true })
    // A scoped worker's changes on disk are those after `since` (disk-changes.ts): the turn starts past it.
    if (record.scope && state.since !== undefined) await clockPast(state.since)
  } catch (error) {
    if (record.writable) await runs.locks.clear(record.workspace, record.id)
    // The launch's own error is the one to report; a claim left behind is taken back later.
    await runs.owners.release(record.id).catch(() => undefined)
    throw error
  }
  // Every turn's brief (the first and each task_continue) says how the answer must end.
  runs.launch(record, withOutputSchema(brief, record.outputSchema), false, relay, queued)
}
