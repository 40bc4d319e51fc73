import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { fail } from "../../errors"
import { shownName } from "../../workspace/names"
import { fileRange, sectionStarts } from "../../workspace/patch"
import { loadPatch, patchState } from "../../workspace/patches"
import { errorResult } from "../shared"
import description from "./patch_show.md" with { type: "text" }

/** Characters of diff per page by default, and at most. */
const PAGE = 16_000
const MAX_PAGE = 64_000

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
        limit: z.number().int().min(1000).max(MAX_PAGE).optional(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        const { record, file, size } = await loadPatch(delegations.runtime.paths.patchesDir, args.patch_id)
        const files = record.files ?? []
        // Offsets count bytes, and only the page is read; a page edge inside a UTF-8 character shows as U+FFFD.
        let range = { start: 0, end: size }
        if (args.file) {
          const index = files.findIndex((entry) => entry.path === args.file || entry.oldPath === args.file)
          const found = index < 0 ? undefined : fileRange(await sectionStarts(file), size, files, index)
          if (index < 0 || found === undefined)
            throw fail(
              "Usage",
              `Patch ${record.id} does not change ${shownName(args.file)}.`,
              `It changes: ${files
                .map((entry) => shownName(entry.path))
                .join(", ")
                .slice(0, 1000)}.`,
            )
          range = found
        }
        const total = range.end - range.start
        const offset = Math.min(args.offset ?? 0, total)
        const end = Math.min(total, offset + (args.limit ?? PAGE))
        const page = Buffer.from(
          await Bun.file(file)
            .slice(range.start + offset, range.start + end)
            .arrayBuffer(),
        ).toString("utf8")
        const next = end < total ? end : undefined
        const state = patchState(record)
        const applied = state === "applied" ? ` at ${record.appliedAt} (patch_discard removes it)` : ""
        const header = `patch ${record.id} · ${state}${applied} · digest ${record.digest} · characters ${offset}-${end} of ${total}${next === undefined ? "" : ` · next_offset ${next}`}`
        return {
          content: [{ type: "text", text: `${header}\n${record.summary ?? ""}\n\n${page}` }],
          structuredContent: {
            patch_id: record.id,
            state,
            applied_at: state === "applied" ? record.appliedAt : undefined,
            digest: record.digest,
            workspace: record.source.workspace,
            summary: record.summary,
            files: files.map((file) => ({
              path: file.path,
              old_path: file.oldPath,
              change: file.change,
              additions: file.additions,
              deletions: file.deletions,
              binary: file.binary,
              link_target: file.linkTarget,
            })),
            diff: page,
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
