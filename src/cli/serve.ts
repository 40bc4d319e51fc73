import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { Delegations } from "../engine/lifecycle"
import { Runtime } from "../engine/runtime"
import { createServer } from "../mcp/server"
import { GuardedStdioTransport } from "../mcp/stdio"
import { releaseLease, takeLease } from "../opencode/lease"
import { spawn } from "../util/process"
import { selfCommand } from "../util/self"

export default defineCommand({
  meta: { name: "serve", description: "Run the MCP server on stdio (what Codex and Claude Code start)." },
  async run() {
    const runtime = new Runtime(flagsFromProcess())
    // With the first task, a detached watchdog (`supervise`) starts beside this process: however this
    // process ends (a client that leaves and kills it, SIGKILL, a crash), the watchdog takes over the
    // tasks still running, keeps their deadlines, and stops the shared server once nothing needs it.
    let watchdog = false
    const onLaunch = () => {
      if (watchdog) return
      watchdog = true
      try {
        spawn([...selfCommand(), "supervise", "--parent", String(process.pid)], {
          detached: true,
          env: runtime.flags.env,
          logFile: runtime.paths.supervisorLog,
        })
      } catch {
        // A full disk for its log, say: then the next serve recovers the tasks, as before.
      }
    }
    const delegations = new Delegations(runtime, { recover: true, onLaunch, retention: true })
    const server = createServer(runtime, delegations)
    const transport = new GuardedStdioTransport()
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve
      // A client that goes away closes our stdin or signals us; stop then rather than linger.
      process.stdin.once("end", resolve)
      process.once("SIGTERM", resolve)
      process.once("SIGINT", resolve)
    })
    // Serving never depends on the state dir being writable: a full disk is reported by each tool call
    // that needs it, not by a server that exits before the handshake.
    const leased = await takeLease(runtime.paths).then(
      () => true,
      () => false,
    )
    await server.connect(transport)
    await closed
    // Nobody is left to answer the asks this process relayed: withdrawn, so no session waits on one.
    await delegations.withdrawAsks(3000)
    // An outcome a full disk kept from being written gets a moment for room to appear.
    await delegations.flushed(5000)
    delegations.retention?.stop()
    // What this process used would otherwise stay in the shared server until it stops.
    await runtime.releaseInstances()
    runtime.close()
    // Tasks still running are the watchdog's now: it outlives this process and holds its own lease.
    if (leased) await releaseLease(runtime.paths, delegations.followedCount() > 0).catch(() => undefined)
  },
})
