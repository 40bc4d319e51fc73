import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import type { TaskRecord } from "../../engine/tasks"
import { checkTaskId } from "../../engine/tasks"
import { recordResult } from "../calls"
import { errorResult, resultShape } from "../shared"
import description from "./task_cancel.md" with { type: "text" }

export function registerTaskCancel(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "task_cancel",
    {
      title: "Cancel a task",
      description,
      inputSchema: { task_id: z.string().min(1) },
      outputSchema: resultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        checkTaskId(args.task_id)
        const { record, alreadyFinished } = await delegations.cancelTask(args.task_id)
        return alreadyFinished ? nothingCancelled(record, recordResult(record)) : recordResult(record)
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}

/** A finished task's result as task_result gives it, headed by a note that this call changed nothing. */
function nothingCancelled(record: TaskRecord, answer: CallToolResult): CallToolResult {
  const note = `Task ${record.id} had already finished (${record.status}); nothing was cancelled.`
  const [first, ...rest] = answer.content
  const text = first?.type === "text" ? `${note}\n${first.text}` : note
  const structured = answer.structuredContent
  const next = [note, structured?.next].filter((part) => typeof part === "string").join(" ")
  return {
    ...answer,
    content: [{ type: "text", text }, ...rest],
    ...(structured ? { structuredContent: { ...structured, next } } : {}),
  }
}
