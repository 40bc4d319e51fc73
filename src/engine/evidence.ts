// What a finished turn is judged by, beside the agent's report: the files git says changed, a
// runner's exit code and log, and autorun files (nested Git metadata, project config, hooks) the task
// planted or changed; and the next step the parent is told when the outcome needs one.
import { runOf } from "../runner/logs"
import type { HostContext } from "../sandbox"
import { autorunChanges, autorunFiles } from "../workspace/autorun"
import { changedFiles, snapshot } from "../workspace/changes"
import type { Status } from "./result"
import type { TaskRecord } from "./tasks"

/** Never rejects: it runs beside the session cleanup, and a missing piece of evidence is just absent. */
export async function measureEvidence(
  record: TaskRecord,
  sessionID: string | undefined,
  runsDir: string,
  host: HostContext,
) {
  // Each piece of evidence that cannot be measured is left out of the result (files_changed absent, no
  // run summary), which the parent reads as "not measured"; it never fails a task that already ended.
  const [after, run, autorun] = await Promise.all([
    record.snapshot?.git
      ? snapshot(record.workspace, host, record.snapshot.repository).catch(() => undefined) // as above
      : undefined,
    record.role === "runner"
      ? runOf(runsDir, [...record.sessions, ...(sessionID ? [sessionID] : [])]).catch(() => undefined) // as above
      : undefined,
    record.writable && record.autorun ? autorunFiles(record.workspace).catch(() => undefined) : undefined, // as above
  ])
  return {
    files: after && record.snapshot ? changedFiles(record.snapshot, after) : undefined,
    run,
    // A scan that failed is reported as such: silence would read as "nothing planted".
    planted: record.autorun
      ? autorun
        ? autorunChanges(record.autorun, autorun)
        : ["(the workspace could not be scanned for planted files)"]
      : [],
  }
}

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
