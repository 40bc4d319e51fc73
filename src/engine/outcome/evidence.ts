// What a finished turn is judged by, beside the agent's report: the files git says changed, for a scoped
// worker in place every file changed on disk (ignored ones too), a runner's exit code and log, and
// autorun files (nested Git metadata, project config, hooks) the task planted or changed; and the next
// step the parent is told when the outcome needs one.
import { describe } from "../../errors"
import { runOf } from "../../runner/logs"
import { hostFs, repositoryPrefixes, type HostContext } from "../../sandbox"
import {
  autorunFiles,
  autorunFlags,
  type AutorunFlag,
  changedFiles,
  snapshot,
  type DiskChanges,
  diskChangesSince,
} from "../../workspace/snapshot"
import type { Status, TaskRecord } from "../records"

/** Never rejects: it runs beside the session cleanup, and a missing piece of evidence is just absent. */
export async function measureEvidence(
  record: TaskRecord,
  sessionID: string | undefined,
  runsDir: string,
  host: HostContext,
) {
  // Each piece of evidence that cannot be measured is left out of the result (files_changed absent, no
  // run summary), which the parent reads as "not measured"; it never fails a task that already ended.
  const [after, run, autorun, disk] = await Promise.all([
    record.snapshot?.git
      ? snapshot(record.workspace, host, record.snapshot.repository).catch(() => undefined) // as above
      : undefined,
    record.role === "runner"
      ? runOf(runsDir, [...record.sessions, ...(sessionID ? [sessionID] : [])]).catch(() => undefined) // as above
      : undefined,
    record.writable && record.autorun
      ? autorunFiles(record.workspace, record.autorun).catch(() => undefined) // as above
      : undefined,
    record.scope && !record.isolation ? diskChanges(record, host) : undefined,
  ])
  return {
    disk,
    files: after && record.snapshot ? changedFiles(record.snapshot, after) : undefined,
    run,
    // A scan that failed is reported as such: silence would read as "nothing planted".
    planted: record.autorun
      ? autorun
        ? autorunFlags(record.autorun, autorun, repositoryPrefixes(record.workspace, hostFs))
        : UNSCANNED
      : [],
  }
}

/**
 * A scoped worker's changes on disk since its turn began (an isolated worker's are judged by its patch:
 * nothing else of its worktree reaches the workspace). Never rejects: a walk that could not run, or a
 * turn with no start time to compare with, is an incomplete answer, which the scope check fails closed on.
 */
async function diskChanges(record: TaskRecord, host: HostContext): Promise<DiskChanges> {
  const since = record.snapshot?.since
  // A start in the future would find nothing: a record that says so is not believed.
  if (since === undefined || since > Date.now())
    return { paths: [], incomplete: "the turn's start time was not recorded" }
  return diskChangesSince(record.workspace, host, { sinceMs: since, scope: record.scope ?? [] }).catch(
    (error: unknown) => ({ paths: [], incomplete: `the walk could not run: ${describe(error)}` }),
  )
}

const UNSCANNED: AutorunFlag[] = [
  { path: "(the workspace could not be scanned for planted files)", change: "changed", rule: "hidden" },
]

export function nextStep(status: Status, record: TaskRecord, note?: string): string | undefined {
  const seconds = Math.round(record.operationMs / 1000)
  if (status === "timed_out")
    return (
      `The ${record.role} ran out of its ${seconds}s budget; check files_changed, then task_continue with a ` +
      `narrower brief or raise timeoutLimits.`
    )
  if (status === "needs_review")
    return "The agent finished without a usable report; read the transcript, or task_continue asking for the report."
  if (status === "cancelled") return "Cancelled; files_changed lists what it had edited by then."
  if (status === "interrupted")
    return (
      `${note ?? "The MCP server stopped while this task ran."} Inspect files_changed and git status before ` +
      `relying on the workspace.`
    )
  return undefined
}
