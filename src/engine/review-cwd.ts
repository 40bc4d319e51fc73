// The review use case's cwd form: a read-only scout in a workspace with uncommitted changes, run in the
// workspace itself (the changes are there), admitted like any scout's cwd, and told the changed files and
// a bounded diff against HEAD (src/workspace/snapshot/uncommitted.ts), under review.ts's fixed output schema. A cwd
// outside git, or with nothing uncommitted, is refused before any task: there is nothing to review.
import { agentName } from "../agents/names"
import { fail } from "../errors"
import type { AdmissionPolicy, HostContext } from "../sandbox"
import { shownName } from "../workspace/names"
import { canonicalWorkspace } from "../workspace/root"
import { uncommitted, type Uncommitted } from "../workspace/snapshot"
import type { StartRequest } from "./admission"
import { LISTED_FILES, REVIEW_SCHEMA, reviewRequest } from "./review"
import template from "./review-cwd.md" with { type: "text" }
import { sessionTitle } from "./title"

/** The diff's share of the brief limit: the template and the parent's brief need the rest. */
const DIFF_SHARE = 0.5

/** A fence longer than any run of backticks in `text`, so the diff cannot close it. Pure. */
const fenceFor = (text: string) => "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)))

/** The reviewer's brief: the changed files, the diff, then the parent's brief. Pure. */
export function cwdReviewBrief(changes: Uncommitted, brief: string): string {
  const lines = changes.files.slice(0, LISTED_FILES).map((file) => `- ${shownName(file.path)} (${file.change})`)
  if (changes.files.length > LISTED_FILES) lines.push(`- … and ${changes.files.length - LISTED_FILES} more`)
  const fence = fenceFor(changes.diff)
  const fill: Record<string, string> = {
    files: lines.join("\n"),
    cut: changes.cut ? " (cut short: read the files themselves for the rest)" : "",
    diff: `${fence}diff\n${changes.diff}${changes.diff.endsWith("\n") || !changes.diff ? "" : "\n"}${fence}`,
    brief,
  }
  return template.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => fill[key] ?? whole)
}

/** Where the cwd form looks: the sandbox's host context, the admission policy, the brief limit. */
export interface CwdReviewPlace {
  host: HostContext
  config: AdmissionPolicy
  maxBriefBytes: number
}

/** The scout start that reviews `cwd`'s uncommitted changes; refuses (with what to do) before any task. */
async function cwdReviewRequest(place: CwdReviewPlace, cwd: string, brief: string): Promise<StartRequest> {
  // Admitted before git looks at it: a directory no scout may run in is not read for a review either.
  const workspace = await canonicalWorkspace(cwd, place.host, place.config)
  const changes = await uncommitted(workspace, place.host, Math.floor(place.maxBriefBytes * DIFF_SHARE))
  if (!changes.git)
    throw fail(
      "Usage",
      `${cwd} is not in a Git repository git can read: review compares uncommitted changes with HEAD.`,
      "Pass the cwd of a Git work tree with the changes, or review an isolated worker's patch_id instead.",
    )
  if (!changes.files.length)
    throw fail(
      "Usage",
      `${cwd} has no uncommitted change (git status is clean): there is nothing to review.`,
      "Make or keep the changes uncommitted in cwd, or pass the patch_id of an isolated worker's patch.",
    )
  const text = cwdReviewBrief(changes, brief)
  const kept = changes.files.slice(0, LISTED_FILES).map(({ path, change }) => ({ path, change }))
  const more = changes.files.length - kept.length
  return {
    role: "scout",
    agent: agentName("scout"),
    cwd: workspace,
    brief: text,
    title: sessionTitle("scout", `review ${brief}`),
    writable: false,
    policy: { delegation: { role: "scout" }, texts: { task: text } },
    outputSchema: REVIEW_SCHEMA,
    reviewed: { cwd: workspace, files: kept, ...(more ? { more } : {}) },
  }
}

/** What review is asked to look at: exactly one of the two. */
export interface ReviewTarget {
  patchId?: string
  cwd?: string
}

/** The review's start for either form; both or neither is refused before anything is read. */
export async function reviewTargetRequest(
  patchesDir: string,
  place: () => Promise<CwdReviewPlace>,
  target: ReviewTarget,
  brief: string,
): Promise<StartRequest> {
  if ((target.patchId === undefined) === (target.cwd === undefined))
    throw fail(
      "Usage",
      `review takes exactly one of patch_id and cwd; ${target.patchId === undefined ? "neither" : "both"} given.`,
      "Pass patch_id for an isolated worker's patch, or cwd for a Git workspace's uncommitted changes.",
    )
  if (target.patchId !== undefined) return reviewRequest(patchesDir, target.patchId, brief)
  return cwdReviewRequest(await place(), target.cwd!, brief)
}
