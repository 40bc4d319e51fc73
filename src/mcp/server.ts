// The MCP server: one tool per file under tools/, the instructions the parent reads first.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Runtime } from "../engine/runtime"
import { VERSION } from "../version"
import instructions from "./instructions.md" with { type: "text" }
import { registerScout } from "./tools/scout"

/** MCP registration name, kept from the system this one replaces so existing prompts work. */
export const SERVER_NAME = "opencode-agents"

export function createServer(runtime: Runtime): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, { instructions, capabilities: { tools: {} } })
  registerScout(server, runtime)
  return server
}
