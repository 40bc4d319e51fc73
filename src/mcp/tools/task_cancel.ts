import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
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
      inputSchema: { task_id: z.string().min(1).describe("The task_id a delegation returned.") },
      outputSchema: resultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) => {
      try {
        checkTaskId(args.task_id)
        return recordResult(await delegations.cancel(args.task_id))
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
