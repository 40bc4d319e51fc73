import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { checkTaskId } from "../../engine/tasks"
import { fail } from "../../errors"
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
        return recordResult(record)
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
