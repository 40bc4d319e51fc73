import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { isFinished } from "../../engine/tasks"
import { fail } from "../../errors"
import { readPatchRecord } from "../../workspace/patches"
import { removeWorktree } from "../../workspace/worktree"
import { errorResult } from "../shared"
import description from "./patch_discard.md" with { type: "text" }

export function registerPatchDiscard(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "patch_discard",
    {
      title: "Discard a patch",
      description,
      inputSchema: { patch_id: z.string().min(1).describe("The patch_id an isolated worker returned.") },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        const { paths } = delegations.runtime
        const record = await readPatchRecord(paths.patchesDir, args.patch_id)
        if (!record) throw fail("Usage", `No patch ${args.patch_id}.`, "It was discarded already, or never existed.")
        const task = record.taskId ? await delegations.read(record.taskId) : undefined
        if (task && !isFinished(task.status)) throw fail("Usage", `Patch ${record.id} belongs to ${task.id}, which is still ${task.status}.`, "task_cancel it first, or wait for it with task_status.")
        // Holding the worktree's writer state: a quarantined or preserved session there (one that may
        // still write) keeps the worktree, and its lane, from being emptied and given to another worker.
        await delegations.holding(record.layout.tree, record.id, () => removeWorktree(paths, record))
        // The lane's directory is the next worker's: its instance goes now, not after the idle time.
        await delegations.runtime.releaseInstances([record.layout.tree])
        return { content: [{ type: "text", text: `Discarded patch ${record.id} and its worktree.` }], structuredContent: { patch_id: record.id, discarded: true } }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
