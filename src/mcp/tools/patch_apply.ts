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
        patch_id: z.string().min(1).describe("The patch_id an isolated worker returned."),
        digest: z.string().min(1).describe("The digest of the patch you reviewed (worker result or patch_show)."),
        cwd: z.string().min(1).optional().describe("Optional: the workspace to write into; it must be the one the worker was given (the default)."),
        allow_autorun: z
          .boolean()
          .optional()
          .describe(
            "Optional: also write files other programs run, or agents read as instructions, on their own (AGENTS.md, CI, hooks, assistant/MCP config, package.json install scripts, policy markers); refused by default.",
          ),
        allow_links: z
          .boolean()
          .optional()
          .describe(
            "Optional: also write symlinks that point outside the repository (or into Git metadata) and links that replace a file or directory; refused by default. The summary names every link with its target.",
          ),
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
        // Nothing runs in an applied patch's worktree any more (task_continue starts a new instance).
        await runtime.releaseInstances([record.layout.tree])
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
