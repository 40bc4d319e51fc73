import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { hostContext } from "../../sandbox"
import { applyPatch } from "../../workspace/apply"
import {
  loadPatch,
  markApplied,
  patchState,
  readPatchRecord,
  type PatchFile,
  type PatchRecord,
} from "../../workspace/patches"
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
        const dir = runtime.paths.patchesDir
        const { record, file } = await loadPatch(dir, args.patch_id)
        if (patchState(record) === "applied" && args.digest === record.digest) return alreadyApplied(record)
        const config = await runtime.config()
        const host = hostContext(runtime.flags, config.sandboxRuntime.trustedRoots)
        const workspace = await canonicalWorkspace(args.cwd ?? record.source.workspace, host, config)
        // Holding the writer state: an in-place worker or writable runner cannot change the files between the checks and the writes.
        const outcome = await delegations.holding(
          workspace,
          record.id,
          async (): Promise<Applied | { already: PatchRecord }> => {
            // Read again under the writer state: an apply of this patch that finished meanwhile is answered, not refused.
            const current = await readPatchRecord(dir, record.id)
            if (current && patchState(current) === "applied" && current.digest === args.digest)
              return { already: current }
            const files = await applyPatch({
              record,
              patchFile: file,
              digest: args.digest,
              workspace,
              host,
              allowAutorun: args.allow_autorun,
              allowLinks: args.allow_links,
            })
            const appliedAt = new Date().toISOString()
            // The files are written: a record that cannot be marked is said, not a failure of the apply.
            const marked = await markApplied(dir, record.id, record.digest!, appliedAt).catch((error: unknown) =>
              error instanceof Error ? error.message : String(error),
            )
            return {
              files,
              appliedAt,
              unmarked: marked === true ? undefined : marked || "it was discarded or collected again meanwhile",
            }
          },
        )
        if ("already" in outcome) return alreadyApplied(outcome.already)
        // Nothing runs in an applied patch's worktree any more (task_continue starts a new instance).
        await runtime.releaseInstances([record.layout.tree])
        const { files, appliedAt, unmarked } = outcome
        const discard = `patch_discard (patch_id "${record.id}") removes the patch and its worktree once you keep the changes.`
        const text = [
          `Applied patch ${record.id} to ${workspace} at ${appliedAt}: ${files.length} file${files.length === 1 ? "" : "s"} written as working-tree changes (nothing staged or committed).`,
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

interface Applied {
  files: PatchFile[]
  appliedAt: string
  /** Why the record could not be marked applied, when it could not. */
  unmarked?: string
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
