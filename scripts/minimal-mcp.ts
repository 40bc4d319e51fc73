// The yardstick of the footprint bench (bench-footprint.ts): the smallest useful MCP server, the SDK and
// one zod tool on stdio, compiled the way the shipped binary is. What it costs is the SDK's and Bun's.
import { McpServer } from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import { z } from "zod"

serveStdio(() => {
  const server = new McpServer({ name: "minimal", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.registerTool(
    "echo",
    { description: "Say the text back.", inputSchema: z.object({ text: z.string().describe("What to say back.") }) },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  )
  return server
})
