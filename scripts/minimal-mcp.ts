// The yardstick of the footprint bench (bench-footprint.ts): the smallest useful MCP server, the SDK and
// one zod tool on stdio, compiled the way the shipped binary is. What it costs is the SDK's and Bun's.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { z } from "zod"

const server = new McpServer({ name: "minimal", version: "1.0.0" }, { capabilities: { tools: {} } })
server.registerTool(
  "echo",
  { description: "Say the text back.", inputSchema: { text: z.string().describe("What to say back.") } },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
)
await server.connect(new StdioServerTransport())
