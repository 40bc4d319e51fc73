import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { MAX_PATCH_PAGE } from "../../engine/patches"
import { fileChange } from "../../engine/structured"
import { errorResult } from "../shared"
import description from "./patch_show.md" with { type: "text" }

export function registerPatchShow(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "patch_show",
    {
      title: "Show a patch",
      description,
      inputSchema: {
        patch_id: z.string().min(1),
        file: z.string().min(1).optional(),
        offset: z.number().int().min(0).optional().describe("The last next_offset."),
        limit: z.number().int().min(1000).max(MAX_PATCH_PAGE).optional(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        const page = await delegations.patches.show(args.patch_id, args)
        const { record, state, offset, end, total, next } = page
        const applied = state === "applied" ? ` at ${record.appliedAt} (patch_discard removes it)` : ""
        const more = next === undefined ? "" : ` · next_offset ${next}`
        const at = `characters ${offset}-${end} of ${total}${more}`
        const header = `patch ${record.id} · ${state}${applied} · digest ${record.digest} · ${at}`
        return {
          content: [{ type: "text", text: `${header}\n${record.summary ?? ""}\n\n${page.diff}` }],
          structuredContent: {
            patch_id: record.id,
            state,
            applied_at: state === "applied" ? record.appliedAt : undefined,
            digest: record.digest,
            workspace: record.source.workspace,
            summary: record.summary,
            files: page.files.map((file) => ({ ...fileChange(file), link_target: file.linkTarget })),
            diff: page.diff,
            offset,
            total,
            next_offset: next,
          },
        }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
