import { z } from "zod"
import type { TaskRecord } from "../../engine"
import { checkTaskId } from "../../engine/terms"
import { handOver } from "../calls"
import { defineTool } from "../define"
import type { ResultReply } from "../replies"
import { resultShape } from "../shared"
import description from "./task_cancel.md" with { type: "text" }

export const taskCancel = defineTool({
  name: "task_cancel",
  title: "Cancel a task",
  description,
  input: { task_id: z.string().min(1) },
  output: resultShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, { delegations }) => {
    checkTaskId(args.task_id)
    const { record, alreadyFinished } = await delegations.cancelTask(args.task_id)
    const reply = await handOver(delegations, record)
    return alreadyFinished ? nothingCancelled(record, reply) : reply
  },
})

/** A finished task's result as task_result gives it, headed by a note that this call changed nothing. */
function nothingCancelled(record: TaskRecord, answer: ResultReply): ResultReply {
  const note = `Task ${record.id} had already finished (${record.status}); nothing was cancelled.`
  const next = [note, answer.structured.next].filter((part) => typeof part === "string").join(" ")
  return { ...answer, text: `${note}\n${answer.text}`, structured: { ...answer.structured, next } }
}
