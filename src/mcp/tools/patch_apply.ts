import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { hostContext } from "../../sandbox"
import { applyPatch } from "../../workspace/apply"
import { loadPatch } from "../../workspace/patches"
import { canonicalWorkspace } from "../../workspace/root"
import { errorResult } from "../shared"
import description from "./patch_apply.md" with { type: "text" }

export function registerPatchApply(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "patch_apply",
    {
      title: "Apply a patch",
      description,
      inputSchema: {
        patch_id: z.string().min(1),
        digest: z.string().min(1).describe("From the worker result or patch_show."),
        cwd: z.string().min(1).optional(),
        allow_autorun: z.boolean().optional().describe("Also write autorun files (AGENTS.md, CI, hooks), once read."),
        allow_links: z.boolean().optional().describe("Also write links leaving the repo, once read."),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        const { runtime } = delegations
        const { record, file } = await loadPatch(runtime.paths.patchesDir, args.patch_id)
        const config = await runtime.config()
        const host = hostContext(runtime.flags, config.sandboxRuntime.trustedRoots)
        const workspace = await canonicalWorkspace(args.cwd ?? record.source.workspace, host, config)
        // Holding the writer state: an in-place worker or writable runner cannot change the files between the checks and the writes.
        const files = await delegations.holding(workspace, record.id, () =>
          applyPatch({ record, patchFile: file, digest: args.digest, workspace, host, allowAutorun: args.allow_autorun, allowLinks: args.allow_links }),
        )
        const text = `Applied patch ${record.id} to ${workspace}: ${files.length} file${files.length === 1 ? "" : "s"} written as working-tree changes (nothing staged or committed).\n${record.summary ?? ""}\nnext: review with git diff / git status; patch_discard removes the patch and its worktree.`
        return {
          content: [{ type: "text", text }],
          structuredContent: { patch_id: record.id, workspace, applied: files.map((file) => ({ path: file.path, old_path: file.oldPath, change: file.change })) },
        }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
