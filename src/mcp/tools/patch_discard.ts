import { z } from "zod"
import { shownName, PATCH_STATES } from "../../engine/terms"
import { defineTool } from "../define"
import description from "./patch_discard.md" with { type: "text" }

export const patchDiscard = defineTool({
  name: "patch_discard",
  title: "Discard a patch",
  description,
  input: { patch_id: z.string().min(1) },
  output: {
    patch_id: z.string(),
    state: z.literal("discarded"),
    discarded: z.literal(true),
    already_discarded: z.boolean().optional(),
    discarded_at: z.string(),
    was: z.enum(PATCH_STATES).optional().describe("Its state before."),
    kept: z.array(z.string()).optional().describe("Files an interrupted apply left, changed since by someone else."),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, { delegations }) => {
    const outcome = await delegations.patches.discard(args.patch_id)
    if (outcome.kind === "already") {
      const { id, discardedAt } = outcome
      return {
        text: `Patch ${id} was already discarded at ${discardedAt}; nothing to do.`,
        structured: {
          patch_id: id,
          state: "discarded" as const,
          discarded: true as const,
          already_discarded: true,
          discarded_at: discardedAt,
        },
      }
    }
    const { record, was, discardedAt, kept } = outcome
    const rolled = kept.length
      ? "\nAn earlier patch_apply of it was killed while writing; it was rolled back except for " +
        `${kept.map(shownName).join(", ")}, changed since by someone else.\n` +
        "next: check those files with git status and git diff."
      : ""
    const when = record.appliedAt && was === "applied" ? ` at ${record.appliedAt}` : ""
    const text = `Discarded patch ${record.id} (it was ${was}${when}) and its worktree.${rolled}`
    return {
      text,
      structured: {
        patch_id: record.id,
        state: "discarded" as const,
        discarded: true as const,
        discarded_at: discardedAt,
        was,
        ...(kept.length ? { kept } : {}),
      },
    }
  },
})
