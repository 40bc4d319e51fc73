import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import { agentName } from "../../engine/agents"
import type { Delegations } from "../../engine/lifecycle"
import { startAndFollow } from "../calls"
import { idempotencyArg, modelArgs, resultShape } from "../shared"
import description from "./scout.md" with { type: "text" }

export function registerScout(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "scout",
    {
      title: "Scout (read-only investigation)",
      description,
      inputSchema: {
        cwd: z.string().min(1).describe("Absolute path of the repository or directory to investigate."),
        task: z.string().min(1).describe("The self-contained question and the form of answer wanted."),
        ...modelArgs,
        ...idempotencyArg,
      },
      outputSchema: resultShape,
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    (args, extra) =>
      startAndFollow(
        server,
        delegations,
        {
          role: "scout",
          agent: agentName("scout"),
          cwd: args.cwd,
          brief: args.task,
          title: `scout: ${args.task.split("\n")[0]!.slice(0, 60)}`,
          model: args.model,
          variant: args.variant,
          writable: false,
          idempotencyKey: args.idempotency_key,
        },
        extra,
      ),
  )
}
