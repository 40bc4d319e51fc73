import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { checkTaskId } from "../../engine/tasks"
import { fail } from "../../errors"
import type { TaskRecord } from "../../engine/tasks"
import { patchState, readDiscarded, readPatchRecord } from "../../workspace/patches"
import { recordResult } from "../calls"
import { errorResult, resultShape } from "../shared"
import description from "./task_result.md" with { type: "text" }

export function registerTaskResult(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "task_result",
    {
      title: "Task result",
      description,
      inputSchema: { task_id: z.string().min(1) },
      outputSchema: resultShape,
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        checkTaskId(args.task_id)
        const record = await delegations.read(args.task_id)
        if (!record) throw fail("Usage", `No task ${args.task_id}.`, "Call task_list for the known tasks.")
        return recordResult(await withPatchState(delegations.runtime.paths.patchesDir, record))
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}

/** The result's patch with its state as the patch store has it now (applied or discarded since the task ended). */
async function withPatchState(dir: string, record: TaskRecord): Promise<TaskRecord> {
  const patch = record.result?.patch
  if (!patch) return record
  // A store that cannot be read leaves the state unsaid: the result itself is still the answer.
  const stored = await readPatchRecord(dir, patch.id).catch(() => undefined)
  // Likewise for the tombstone: no state rather than no result.
  const gone = stored ? undefined : await readDiscarded(dir, patch.id).catch(() => undefined)
  const state = stored ? (stored.digest === patch.digest ? patchState(stored) : undefined) : gone && "discarded"
  return { ...record, result: { ...record.result!, patch: { ...patch, state } } }
}
