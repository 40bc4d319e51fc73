import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { isFinished } from "../../engine/tasks"
import { fail } from "../../errors"
import { hostContext } from "../../sandbox"
import { recoverKilled } from "../../workspace/apply"
import { interruptedApplies } from "../../workspace/apply-staging"
import { shownName } from "../../workspace/names"
import { patchState, readDiscarded, readPatchRecord, saveDiscarded } from "../../workspace/patches"
import { removeWorktree } from "../../workspace/worktree"
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
        const { paths } = delegations.runtime
        const record = await readPatchRecord(paths.patchesDir, args.patch_id)
        if (!record) return await gone(paths.patchesDir, args.patch_id)
        const task = record.taskId ? await delegations.read(record.taskId) : undefined
        if (task && !isFinished(task.status))
          throw fail(
            "Usage",
            `Patch ${record.id} belongs to ${task.id}, which is still ${task.status}.`,
            "task_cancel it first, or wait for it with task_status.",
          )
        // Holding the worktree's writer state: a quarantined or preserved session there (one that may
        // still write) keeps the worktree, and its lane, from being emptied and given to another worker.
        // An apply killed while writing is rolled back first, holding the user's workspace: its staging
        // (the files as they were) goes with the lane below.
        let kept: string[] = []
        if ((await interruptedApplies(record.layout.dir)).length) {
          const config = await delegations.runtime.config()
          const host = hostContext(delegations.runtime.flags, config.sandboxRuntime.trustedRoots)
          const workspace = record.source.workspace
          kept = await delegations.holding(workspace, record.id, () => recoverKilled(record, workspace, host))
        }
        const discardedAt = await delegations.holding(record.layout.tree, record.id, async () => {
          // Read again: a discard that finished meanwhile freed the lane, which another worker may hold by now.
          const current = await readPatchRecord(paths.patchesDir, record.id)
          if (!current) return undefined
          const at = new Date().toISOString()
          // The tombstone first: killed before the record goes, the record still answers, and a discard again finishes.
          await saveDiscarded(paths.patchesDir, current, at)
          await removeWorktree(paths, current)
          return at
        })
        if (!discardedAt) return await gone(paths.patchesDir, record.id)
        // The lane's directory is the next worker's: its instance goes now, not after the idle time.
        await delegations.runtime.releaseInstances([record.layout.tree])
        const state = patchState(record)
        const rolled = kept.length
          ? `\nAn earlier patch_apply of it was killed while writing; it was rolled back except for ${kept.map(shownName).join(", ")}, changed since by someone else.\nnext: check those files with git status and git diff.`
          : ""
        const text = `Discarded patch ${record.id} (it was ${state}${record.appliedAt && state === "applied" ? ` at ${record.appliedAt}` : ""}) and its worktree.${rolled}`
        return {
          content: [{ type: "text", text }],
          structuredContent: {
            patch_id: record.id,
            state: "discarded",
            discarded: true,
            discarded_at: discardedAt,
            was: state,
            ...(kept.length ? { kept } : {}),
          },
        }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}

/** No record: a discarded patch is answered as such (the tool is idempotent); an unknown one is an error. */
async function gone(dir: string, id: string): Promise<CallToolResult> {
  const tombstone = await readDiscarded(dir, id)
  if (!tombstone)
    throw fail(
      "Usage",
      `No patch ${id}.`,
      "It never existed here, or its record was lost; task_list shows the stored patches.",
    )
  return {
    content: [{ type: "text", text: `Patch ${id} was already discarded at ${tombstone.discardedAt}; nothing to do.` }],
    structuredContent: {
      patch_id: id,
      state: "discarded",
      discarded: true,
      already_discarded: true,
      discarded_at: tombstone.discardedAt,
    },
  }
}
