import { z } from "zod"
import { checkTaskId } from "../../engine/terms"
import { defineTool } from "../define"
import description from "./task_respond.md" with { type: "text" }
import { statusOfRecord, statusShape } from "./task_status"

export const taskRespond = defineTool({
  name: "task_respond",
  title: "Answer a task's question",
  description,
  input: {
    task_id: z.string().min(1),
    answer: z.string(),
  },
  output: statusShape,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: async (args, { delegations, engine }) => {
    checkTaskId(args.task_id)
    const record = await delegations.respond(args.task_id, args.answer)
    const status = statusOfRecord(engine, record)
    const next = `Answered; the task runs on. Call task_status with after_revision ${record.revision} and wait_seconds.`
    return { text: `answered task ${record.id}\nnext: ${next}`, structured: { ...status, next } }
  },
})
