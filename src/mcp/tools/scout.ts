import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import { agentName } from "../../engine/agents"
import { delegate } from "../../engine/delegate"
import type { Runtime } from "../../engine/runtime"
import { delegationResult, errorResult, modelArgs, progressReporter, resultShape } from "../shared"
import description from "./scout.md" with { type: "text" }

export function registerScout(server: McpServer, runtime: Runtime) {
  server.registerTool(
    "scout",
    {
      title: "Scout (read-only investigation)",
      description,
      inputSchema: {
        cwd: z.string().min(1).describe("Absolute path of the repository or directory to investigate."),
        task: z.string().min(1).describe("The self-contained question and the form of answer wanted."),
        ...modelArgs,
      },
      outputSchema: resultShape,
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args, extra) => {
      try {
        const result = await delegate(runtime, {
          role: "scout",
          agent: agentName("scout"),
          cwd: args.cwd,
          brief: args.task,
          title: `scout: ${args.task.split("\n")[0]!.slice(0, 60)}`,
          model: args.model,
          variant: args.variant,
          signal: extra.signal,
          onProgress: progressReporter(extra),
        })
        return delegationResult(result)
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
