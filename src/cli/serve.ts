import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import type { Delegations, Runtime } from "../engine"
import type { Backend } from "../mcp/define"
import { createServer } from "../mcp/server"
import { GuardedStdioTransport } from "../mcp/stdio"
import { releaseLease, takeLeaseNow } from "../opencode/lease"
import { spawn } from "../util/process"
import { selfCommand } from "../util/self"
import { watchdogCommand } from "./watchdog"

/** What the first tool call built: the runtime, the delegations on it, and whether the lease was taken. */
interface Built {
  runtime: Runtime
  delegations: Delegations
  leased: boolean
}

export default defineCommand({
  meta: { name: "serve", description: "Run the MCP server on stdio (what Codex and Claude Code start)." },
  async run() {
    const flags = flagsFromProcess()
    // Loaded and built by the first tool call: a server that only answered `initialize` and `tools/list`
    // has loaded no engine code, read no task record, started no recovery or retention timer and reached
    // no OpenCode server (test/architecture/startup.test.ts). That call takes the lease first, before
    // anything it does can find or start the shared server. Serving never depends on the state dir being
    // writable: a full disk is reported by each call that needs it.
    let built: Built | undefined
    let opening: Promise<Backend> | undefined
    const build = async (): Promise<Backend> => {
      const engine = await import("../engine")
      const runtime = new engine.Runtime(flags)
      let leased = false
      try {
        takeLeaseNow(runtime.paths)
        leased = true
      } catch {
        // As before: the call goes on, and a full disk is reported where it matters.
      }
      const onLaunch = watchdogStarter(runtime)
      const delegations = new engine.Delegations(runtime, { recover: true, onLaunch, retention: true })
      built = { runtime, delegations, leased }
      return { engine, delegations }
    }
    // A build that threw (a state dir that cannot be resolved, say) is tried again by the next call.
    const open = () =>
      (opening ??= build().catch((error: unknown) => {
        opening = undefined
        throw error
      }))
    const server = createServer(open)
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
    // A first call still loading the engine finishes building, so what it started is wound down below.
    await opening?.catch(() => undefined)
    if (!built) return
    const { runtime, delegations, leased } = built
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

/**
 * With the first task, a detached watchdog (`supervise`) starts beside this process: however this process ends (a
 * client that leaves and kills it, SIGKILL, a crash), the watchdog takes over the tasks still running, keeps their
 * deadlines, and stops the shared server once nothing needs it.
 */
function watchdogStarter(runtime: Runtime): () => void {
  let started = false
  return () => {
    if (started) return
    started = true
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
}
