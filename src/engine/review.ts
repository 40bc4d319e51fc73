// The review use case: a read-only scout on an isolated worker's patch, in the patch's worktree (where
// the change is present), told what changed and what the parent wants checked, and held to a fixed
// output schema (output-schema.ts) so the verdict and findings come back as structured output. Pure
// except the patch record's read: the start itself is the lifecycle's, as for any scout.
import { agentName } from "../agents/names"
import { shownName } from "../workspace/names"
import { loadPatch, type PatchRecord } from "../workspace/patches"
import template from "./review.md" with { type: "text" }
import type { StartRequest } from "./admission"
import { sessionTitle } from "./title"

const VERDICTS = ["approve", "request_changes", "unsure"] as const
const SEVERITIES = ["blocker", "major", "minor", "note"] as const

/** Files listed in the brief at most; the reviewer reads the rest in the tree. */
export const LISTED_FILES = 100

/** What the reviewer must end with: a verdict and findings tied to file and line. */
export const REVIEW_SCHEMA = {
  type: "object",
  properties: {
    verdict: { enum: [...VERDICTS] },
    findings: {
      type: "array",
      maxItems: 100,
      items: {
        type: "object",
        properties: {
          file: { type: "string", minLength: 1 },
          line: { type: "integer", minimum: 1 },
          severity: { enum: [...SEVERITIES] },
          note: { type: "string", minLength: 1 },
        },
        required: ["file", "severity", "note"],
        additionalProperties: false,
      },
    },
  },
  required: ["verdict", "findings"],
  additionalProperties: false,
}

/** The reviewer's brief: the patch's summary and files, then the parent's brief. Pure. */
function reviewBrief(record: PatchRecord, brief: string): string {
  const files = record.files ?? []
  const lines = files
    .slice(0, LISTED_FILES)
    .map((file) => `- ${shownName(file.path)} (${file.change}, +${file.additions} -${file.deletions})`)
  if (files.length > LISTED_FILES) lines.push(`- … and ${files.length - LISTED_FILES} more`)
  const fill: Record<string, string> = {
    patch: record.id,
    summary: record.summary ?? "no summary",
    files: lines.join("\n") || "- none",
    brief,
  }
  return template.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => fill[key] ?? whole)
}

/**
 * The scout start that reviews `patchId`: loadPatch refuses (with what to do) an unknown, discarded or
 * unstored patch, and one not collected yet (its worker still runs: its tree is still changing).
 */
export async function reviewRequest(patchesDir: string, patchId: string, brief: string): Promise<StartRequest> {
  const { record } = await loadPatch(patchesDir, patchId)
  const text = reviewBrief(record, brief)
  return {
    role: "scout",
    agent: agentName("scout"),
    cwd: record.layout.tree,
    brief: text,
    title: sessionTitle("scout", `review ${record.id}: ${brief}`),
    writable: false,
    policy: { delegation: { role: "scout" }, texts: { task: text } },
    outputSchema: REVIEW_SCHEMA,
    review: { patchId: record.id, source: record.source.workspace },
    reviewed: { patchId: record.id },
  }
}
