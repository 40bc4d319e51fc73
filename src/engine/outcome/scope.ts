// A scoped worker's result judged against its scope (src/workspace/scope.ts): every file changed outside
// the scope is named in `outOfScope`, and a succeeded task becomes needs_review. In place that is what git
// says changed and what changed on disk during the turn, ignored files included (disk-changes.ts); such
// files stay in the workspace. In a worktree they were left out of the patch (patch.ts). A change that
// could not be measured (no git, a patch not collected, a disk walk cut short) fails closed: needs_review,
// saying so.
import type { DiskChanges } from "../../workspace/snapshot"
import { shownName } from "../../workspace/names"
import { outOfScope } from "../../workspace/scope"
import type { DelegationResult } from "../records"

export interface ScopeFacts {
  scope: readonly string[]
  /** An isolated worker: the paths patch collection left out, or undefined when no patch was collected. */
  leftOut?: readonly string[]
  /** In place: what changed on disk during the turn (directories as `name/`); absent for an isolated worker. */
  disk?: DiskChanges
  isolated: boolean
}

const listed = (paths: readonly string[]) => paths.map(shownName).join(", ")

/** Names the files changed outside the scope and sets status, warnings and next accordingly. Pure. */
export function applyScope(result: DelegationResult, facts: ScopeFacts): void {
  const outside = facts.isolated
    ? facts.leftOut
    : result.files &&
      [
        ...new Set([
          ...outOfScope(
            facts.scope,
            result.files.map((f) => f.path),
          ),
          ...diskOutside(facts),
        ]),
      ].sort()
  if (facts.disk?.incomplete)
    flag(
      result,
      `The files outside the worker's scope could not all be compared: ${facts.disk.incomplete}.`,
      "Inspect the workspace, ignored files included.",
    )
  if (outside === undefined) {
    const why = facts.isolated
      ? "the patch could not be collected"
      : "git could not measure what changed (is the workspace in a Git repository?)"
    flag(result, `The worker's changes could not be checked against its scope: ${why}.`, "Inspect the workspace.")
    return
  }
  if (!outside.length) return
  result.outOfScope = [...outside]
  const reason = `The worker changed ${outside.length} file(s) outside its scope: ${listed(outside)}.`
  const next = facts.isolated
    ? "They are left out of the patch and stay only in its worktree; patch_apply writes the in-scope files alone."
    : "They stay in the workspace as the worker left them: review them with git diff, then keep or revert each."
  flag(result, reason, next)
}

/** What changed on disk outside the scope; a directory is judged by its own path. Pure. */
const diskOutside = (facts: ScopeFacts) =>
  (facts.disk?.paths ?? []).filter((path) => outOfScope(facts.scope, [path.replace(/\/$/, "") || "."]).length)

function flag(result: DelegationResult, reason: string, next: string) {
  if (result.status === "succeeded") result.status = "needs_review"
  result.warnings = [reason, ...(result.warnings ?? [])]
  result.next = `${reason} ${next} ${result.next ?? ""}`.trim()
}
