import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { checkTaskId } from "../../engine/tasks"
import { continueAndFollow } from "../calls"
import { refusalResult, secretRefusal } from "../policy"
import { errorResult, resultShape } from "../shared"
import description from "./task_continue.md" with { type: "text" }

export function registerTaskContinue(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "task_continue",
    {
      title: "Continue a finished task",
      description,
      inputSchema: {
        task_id: z.string().min(1).describe("A finished task's task_id."),
        task: z.string().min(1).describe("The rework: what to change or add, and how to verify it."),
      },
      outputSchema: resultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      try {
        checkTaskId(args.task_id)
        // Rework goes to the same model as the brief did: the secret guard reads it too.
        const secret = secretRefusal({ task: args.task })
        if (secret) return refusalResult(secret)
        return await continueAndFollow(server, delegations, args.task_id, args.task, extra)
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
