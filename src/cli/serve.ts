import { defineCommand } from "citty"
import { readFlags } from "../config/flags"
import { Delegations } from "../engine/lifecycle"
import { Runtime } from "../engine/runtime"
import { createServer } from "../mcp/server"
import { GuardedStdioTransport } from "../mcp/stdio"
import { releaseLease, takeLease } from "../opencode/lease"

export default defineCommand({
  meta: { name: "serve", description: "Run the MCP server on stdio (what Codex and Claude Code start)." },
  async run() {
    const runtime = new Runtime(readFlags(process.env))
    const delegations = new Delegations(runtime)
    const server = createServer(runtime, delegations)
    const transport = new GuardedStdioTransport()
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve
      // A client that goes away closes our stdin or signals us; stop then rather than linger.
      process.stdin.once("end", resolve)
      process.once("SIGTERM", resolve)
      process.once("SIGINT", resolve)
    })
    await takeLease(runtime.paths)
    await server.connect(transport)
    await closed
    runtime.close()
    // Sessions still running stay on the shared server: the next `serve` re-attaches to them.
    await releaseLease(runtime.paths, delegations.live.size > 0)
  },
})
