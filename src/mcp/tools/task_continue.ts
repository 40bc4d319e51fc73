import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { checkTaskId } from "../../engine/tasks"
import { continueAndFollow } from "../calls"
import { errorResult, mechanicalArg, policyArgs, resultShape } from "../shared"
import description from "./task_continue.md" with { type: "text" }

export function registerTaskContinue(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "task_continue",
    {
      title: "Continue a finished task",
      description,
      inputSchema: {
        task_id: z.string().min(1),
        task: z.string().min(1).describe("The rework and how to verify it."),
        // The rework passes the policy as a new call does: its own tier, mode and (a worker's) mechanical.
        ...policyArgs,
        ...mechanicalArg,
      },
      outputSchema: resultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      try {
        checkTaskId(args.task_id)
        const call = { tier: args.tier, mode: args.mode, mechanical: args.mechanical }
        return await continueAndFollow(server, delegations, args.task_id, args.task, extra, call)
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
