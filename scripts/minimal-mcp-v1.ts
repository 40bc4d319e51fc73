// The same yardstick as minimal-mcp.ts on the SDK's previous line, v1 (`@modelcontextprotocol/sdk`, a
// devDependency for this bench only): the SDK and one zod tool on stdio, compiled the way the shipped binary
// is, so the footprint bench shows what moving from v1 to v2 costs or saves beside what our server adds.
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
