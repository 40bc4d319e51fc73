import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { shownName } from "../../workspace/names"
import { errorResult } from "../shared"
import description from "./patch_discard.md" with { type: "text" }

export function registerPatchDiscard(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "patch_discard",
    {
      title: "Discard a patch",
      description,
      inputSchema: { patch_id: z.string().min(1) },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        const outcome = await delegations.patches.discard(args.patch_id)
        if (outcome.kind === "already") {
          const { id, discardedAt } = outcome
          return {
            content: [{ type: "text", text: `Patch ${id} was already discarded at ${discardedAt}; nothing to do.` }],
            structuredContent: {
              patch_id: id,
              state: "discarded",
              discarded: true,
              already_discarded: true,
              discarded_at: discardedAt,
            },
          }
        }
        const { record, was, discardedAt, kept } = outcome
        const rolled = kept.length
          ? `\nAn earlier patch_apply of it was killed while writing; it was rolled back except for ${kept.map(shownName).join(", ")}, changed since by someone else.\nnext: check those files with git status and git diff.`
          : ""
        const when = record.appliedAt && was === "applied" ? ` at ${record.appliedAt}` : ""
        const text = `Discarded patch ${record.id} (it was ${was}${when}) and its worktree.${rolled}`
        return {
          content: [{ type: "text", text }],
          structuredContent: {
            patch_id: record.id,
            state: "discarded",
            discarded: true,
            discarded_at: discardedAt,
            was,
            ...(kept.length ? { kept } : {}),
          },
        }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
