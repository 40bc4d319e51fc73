import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import type { PatchRecord } from "../../workspace/patches"
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
        const outcome = await delegations.patches.apply(args.patch_id, {
          digest: args.digest,
          cwd: args.cwd,
          allowAutorun: args.allow_autorun,
          allowLinks: args.allow_links,
        })
        if (outcome.kind === "already") return alreadyApplied(outcome.record)
        const { record, workspace, files, appliedAt, unmarked } = outcome
        const discard = `patch_discard (patch_id "${record.id}") removes the patch and its worktree once you keep the changes.`
        const count = `${files.length} file${files.length === 1 ? "" : "s"}`
        const text = [
          `Applied patch ${record.id} to ${workspace} at ${appliedAt}: ${count} written as working-tree changes ` +
            "(nothing staged or committed).",
          record.summary ?? "",
          unmarked &&
            `warning: the patch's record could not be marked applied (${unmarked}); task_list may still show it waiting.`,
          `next: review with git diff / git status; then ${discard}`,
        ].filter((line): line is string => typeof line === "string" && line !== "")
        return {
          content: [{ type: "text", text: text.join("\n") }],
          structuredContent: {
            patch_id: record.id,
            state: "applied",
            applied_at: appliedAt,
            workspace,
            applied: files.map((file) => ({ path: file.path, old_path: file.oldPath, change: file.change })),
            next: `Review with git diff / git status; then ${discard}`,
          },
        }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}

/** A second apply of the patch already written: said plainly, with what is left to do. */
function alreadyApplied(record: PatchRecord) {
  const next = `patch_discard (patch_id "${record.id}") removes the patch and its worktree; git diff shows the applied changes.`
  return {
    content: [
      {
        type: "text" as const,
        text: `Patch ${record.id} was already applied at ${record.appliedAt} to ${record.source.workspace}; nothing was written now.\nnext: ${next}`,
      },
    ],
    structuredContent: {
      patch_id: record.id,
      state: "applied",
      applied_at: record.appliedAt,
      already_applied: true,
      workspace: record.source.workspace,
      next,
    },
  }
}
