import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import { agentName } from "../../engine/agents"
import type { Delegations } from "../../engine/lifecycle"
import { startAndFollow } from "../calls"
import { idempotencyArg, modelArgs, resultShape } from "../shared"
import description from "./worker.md" with { type: "text" }

export function registerWorker(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "worker",
    {
      title: "Worker (bounded implementation)",
      description,
      inputSchema: {
        cwd: z.string().min(1).describe("Absolute path of the repository or directory the worker may edit."),
        task: z.string().min(1).describe("The self-contained brief: deliverable, settled design, files it may change, how to verify."),
        ...modelArgs,
        ...idempotencyArg,
      },
      outputSchema: resultShape,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    (args, extra) =>
      startAndFollow(
        server,
        delegations,
        {
          role: "worker",
          agent: agentName("worker"),
          cwd: args.cwd,
          brief: args.task,
          title: `worker: ${args.task.split("\n")[0]!.slice(0, 60)}`,
          model: args.model,
          variant: args.variant,
          writable: true,
          idempotencyKey: args.idempotency_key,
        },
        extra,
      ),
  )
}
