// The MCP server: one tool per file under tools/ (toolset.ts), the instructions the parent reads first.
// The tools load with the first call (listed.ts) and run on a backend opened then (define.ts): `serve`
// loads the engine, and builds the Delegations that recovers the task records an earlier process left.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SERVER_NAME, VERSION } from "../version"
import type { OpenBackend } from "./define"
import instructions from "./instructions.md" with { type: "text" }
import { toolsOnFirstCall } from "./listed"
import { offerNativeTasks, TASKS_CAPABILITY } from "./tasks"

export function createServer(open: OpenBackend): McpServer {
  // No `tools` here: the McpServer declares it with its tool handlers, which tasks.ts and listed.ts wrap as they go in.
  const capabilities = { tasks: TASKS_CAPABILITY }
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, { instructions, capabilities })
  offerNativeTasks(server, open)
  toolsOnFirstCall(server, open)
  return server
}
