import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { Delegations } from "../engine/lifecycle"
import { Runtime } from "../engine/runtime"
import { createServer } from "../mcp/server"
import { GuardedStdioTransport } from "../mcp/stdio"
import { releaseLease, takeLeaseNow } from "../opencode/lease"
import { onFirstUse } from "../util/lazy"
import { spawn } from "../util/process"
import { selfCommand } from "../util/self"
import { watchdogCommand } from "./watchdog"

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
        const { pid } = spawn(watchdogCommand(selfCommand(), process.pid), {
          detached: true,
          env: runtime.flags.env,
          logFile: runtime.paths.supervisorLog,
        })
        // Leased while this process still holds its own: no moment without one until supervise leaves.
        takeLeaseNow(runtime.paths, pid)
      } catch {
        // A full disk for its log, say: then the next serve recovers the tasks, as before.
      }
    }
    // Built by the first tool call (util/lazy.ts): a server that only answered `initialize` and `tools/list`
    // has read no task record, started no recovery or retention timer and reached no OpenCode server. That
    // call takes the lease first, before anything it does can find or start the shared server. Serving
    // never depends on the state dir being writable: a full disk is reported by each call that needs it.
    let leased = false
    let built: Delegations | undefined
    const delegations = onFirstUse(() => {
      try {
        takeLeaseNow(runtime.paths)
        leased = true
      } catch {
        // As before: the call goes on, and a full disk is reported where it matters.
      }
      built = new Delegations(runtime, { recover: true, onLaunch, retention: true })
      return built
    })
    const server = createServer(runtime, delegations)
    const transport = new GuardedStdioTransport()
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve
      // A client that goes away closes our stdin or signals us; stop then rather than linger.
      process.stdin.once("end", resolve)
      process.once("SIGTERM", resolve)
      process.once("SIGINT", resolve)
    })
    await server.connect(transport)
    await closed
    if (built) {
      // Nobody is left to answer the asks this process relayed: withdrawn, so no session waits on one.
      await built.withdrawAsks(3000)
      // An outcome a full disk kept from being written gets a moment for room to appear.
      await built.flushed(5000)
      built.retention?.stop()
      // What this process used would otherwise stay in the shared server until it stops.
      await runtime.releaseInstances()
    }
    runtime.close()
    // Tasks still running are the watchdog's now: it outlives this process and holds its own lease.
    if (leased) await releaseLease(runtime.paths, (built?.followedCount() ?? 0) > 0).catch(() => undefined)
  },
})
