import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { defineCommand } from "citty"
import { readFlags } from "../config/flags"
import { Runtime } from "../engine/runtime"
import { createServer } from "../mcp/server"

export default defineCommand({
  meta: { name: "serve", description: "Run the MCP server on stdio (what Codex and Claude Code start)." },
  async run() {
    const runtime = new Runtime(readFlags(process.env))
    const server = createServer(runtime)
    const transport = new StdioServerTransport()
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve
      // A client that goes away closes our stdin; stop then rather than linger.
      process.stdin.once("end", resolve)
    })
    await server.connect(transport)
    await closed
    runtime.close()
  },
})
