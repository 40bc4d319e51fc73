import { z } from "zod"
import type { PatchRecord } from "../../engine"
import { CHANGE_KINDS } from "../../engine/terms"
import { defineTool } from "../define"
import type { Reply } from "../replies"
import description from "./patch_apply.md" with { type: "text" }

const outputShape = {
  patch_id: z.string(),
  state: z.literal("applied"),
  applied_at: z.string().optional(),
  already_applied: z.boolean().optional().describe("Applied before; nothing was written now."),
  workspace: z.string(),
  applied: z
    .array(
      z.object({
        path: z.string(),
        old_path: z.string().optional(),
        change: z.enum(CHANGE_KINDS),
        rule: z
          .string()
          .optional()
          .describe("The autorun rule it matched: hidden, root-non-source, executable, mode-change."),
      }),
    )
    .optional()
    .describe("The files written, as working-tree changes."),
  next: z.string(),
}
type ApplyOutput = z.output<z.ZodObject<typeof outputShape>>

export const patchApply = defineTool({
  name: "patch_apply",
  title: "Apply a patch",
  description,
  input: {
    patch_id: z.string().min(1),
    digest: z.string().min(1).describe("From the worker result or patch_show."),
    cwd: z.string().min(1).optional(),
    allow_autorun: z.boolean().optional().describe("Also write autorun files (AGENTS.md, CI, hooks), once read."),
    allow_links: z.boolean().optional().describe("Also write links leaving the repo, once read."),
  },
  output: outputShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: async (args, { delegations }) => {
    const outcome = await delegations.patches.apply(args.patch_id, {
      digest: args.digest,
      cwd: args.cwd,
      allowAutorun: args.allow_autorun,
      allowLinks: args.allow_links,
    })
    if (outcome.kind === "already") return alreadyApplied(outcome.record)
    const { record, workspace, files, appliedAt, ruled, unmarked, found } = outcome
    const ruleOf = new Map(ruled.map((file) => [file.path, file.rule]))
    const removes = "removes the patch and its worktree once you keep the changes."
    const discard = `patch_discard (patch_id "${record.id}") ${removes}`
    const count = `${files.length} file${files.length === 1 ? "" : "s"}`
    const text = [
      `Applied patch ${record.id} to ${workspace} at ${appliedAt}: ${count} written as working-tree changes ` +
        "(nothing staged or committed).",
      record.summary ?? "",
      found && `The files were found holding the patch whole: ${found}`,
      ruled.length > 0 &&
        `warning: written files that may act on their own, by rule: ${ruled
          .slice(0, 10)
          .map((file) => `${file.path} (${file.rule})`)
          .join(
            ", ",
          )}${ruled.length > 10 ? ` and ${ruled.length - 10} more` : ""}; read them before running tools there.`,
      unmarked &&
        `warning: the patch's record could not be marked applied (${unmarked}); task_list may still show it waiting.`,
      `next: review with git diff / git status; then ${discard}`,
    ].filter((line): line is string => typeof line === "string" && line !== "")
    return {
      text: text.join("\n"),
      structured: {
        patch_id: record.id,
        state: "applied" as const,
        applied_at: appliedAt,
        workspace,
        applied: files.map((file) => ({
          path: file.path,
          old_path: file.oldPath,
          change: file.change,
          ...(ruleOf.has(file.path) ? { rule: ruleOf.get(file.path) } : {}),
        })),
        next: `Review with git diff / git status; then ${discard}`,
      },
    }
  },
})

/** A second apply of the patch already written: said plainly, with what is left to do. */
function alreadyApplied(record: PatchRecord): Reply<ApplyOutput> {
  const next =
    `patch_discard (patch_id "${record.id}") removes the patch and its worktree; ` +
    "git diff shows the applied changes."
  const { id, appliedAt } = record
  const where = record.source.workspace
  return {
    text: `Patch ${id} was already applied at ${appliedAt} to ${where}; nothing was written now.\nnext: ${next}`,
    structured: {
      patch_id: record.id,
      state: "applied",
      applied_at: record.appliedAt,
      already_applied: true,
      workspace: record.source.workspace,
      next,
    },
  }
}
