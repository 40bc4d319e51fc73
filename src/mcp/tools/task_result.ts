import { z } from "zod"
import type { TaskRecord } from "../../engine"
import { checkTaskId, fail, patchState } from "../../engine/terms"
import { recordResult } from "../calls"
import { defineTool, type Engine } from "../define"
import { resultShape } from "../shared"
import description from "./task_result.md" with { type: "text" }

export const taskResult = defineTool({
  name: "task_result",
  title: "Task result",
  description,
  input: { task_id: z.string().min(1) },
  output: resultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { delegations, engine }) => {
    checkTaskId(args.task_id)
    const record = await delegations.read(args.task_id)
    if (!record) throw fail("Usage", `No task ${args.task_id}.`, "Call task_list for the known tasks.")
    const reply = recordResult(await withPatchState(engine, delegations.runtime.paths.patchesDir, record))
    await delegations.resultRead(record)
    return reply
  },
})

/** The result's patch with its state as the patch store has it now (applied or discarded since the task ended). */
async function withPatchState(engine: Engine, dir: string, record: TaskRecord): Promise<TaskRecord> {
  const patch = record.result?.patch
  if (!patch) return record
  // A store that cannot be read leaves the state unsaid: the result itself is still the answer.
  const stored = await engine.readPatchRecord(dir, patch.id).catch(() => undefined)
  // Likewise for the tombstone: no state rather than no result.
  const gone = stored ? undefined : await engine.readDiscarded(dir, patch.id).catch(() => undefined)
  const state = stored ? (stored.digest === patch.digest ? patchState(stored) : undefined) : gone && "discarded"
  return { ...record, result: { ...record.result!, patch: { ...patch, state } } }
}
