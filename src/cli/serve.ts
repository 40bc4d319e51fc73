import { serveStdio } from "@modelcontextprotocol/server/stdio"
import { defineCommand } from "citty"
import { mkdir } from "node:fs/promises"
import { flagsFromProcess, type Flags } from "../config/flags"
import { resolvePaths } from "../config/paths"
import type { Delegations, Runtime } from "../engine"
import type { Backend, OpenBackend } from "../mcp/define"
import { createServer } from "../mcp/server"
import { GuardedStdioTransport } from "../mcp/stdio"
import { roleInstructions } from "../roles/instructions"
import { releaseLease, takeLeaseNow } from "../opencode/lease"
import { spawn } from "../util/process"
import { selfCommand } from "../util/self"
import { watchdogCommand } from "./watchdog"

/**
 * How long a stopping serve gives the cancels its client asked for to settle: a session's abort and the record's
 * write, seconds on a loaded machine. Past it the watchdog takes the task over, as for any task still running.
 */
const CANCELS_SETTLE_MS = 10_000

/** What the first tool call built: the runtime, the delegations on it, and whether the lease was taken. */
interface Built {
  runtime: Runtime
  delegations: Delegations
  leased: boolean
}

export default defineCommand({
  meta: { name: "serve", description: "Run the MCP server on stdio (what Codex and Claude Code start)." },
  args: {
    http: {
      type: "string",
      valueHint: "[HOST:]PORT",
      description: "Serve Streamable HTTP on this address instead (loopback unless a host is named).",
    },
  },
  async run({ args }) {
    const flags = flagsFromProcess()
    // Checked before anything starts: a bad address or token file is said at once, with its fix.
    const http = args.http === undefined ? undefined : await httpSetup(args.http, flags)
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
    // The person's roles, named in the instructions a parent reads first; a listing that fails names none.
    const paths = resolvePaths(flags)
    const roles = await roleInstructions(paths.home, paths.configFile).catch(() => "")
    const served = http ? await startHttp(http, open, roles) : startStdio(open, roles)
    await served.closed
    // A first call still loading the engine finishes building, so what it started is wound down below.
    await opening?.catch(() => undefined)
    // The connection closes last: closing it aborts the calls still open, and their asks are withdrawn first.
    // Closing one the client already closed may fail; it is closed either way.
    const disconnect = () => served.close().catch(() => undefined)
    if (!built) return disconnect()
    const { runtime, delegations, leased } = built
    // A cancel the client sent before it left is finished first: the task ends cancelled, as asked. (A client
    // that kills us instead, as Codex does right after cancelling, leaves the recorded cancel to the
    // watchdog: lifecycle.ts writes it before anything stops.) A call's cancel is issued on a timer after its
    // abort (src/mcp/calls.ts): one of ours, set after it, fires after it.
    await new Promise((resolve) => setTimeout(resolve, 0))
    await delegations.cancelsSettled(CANCELS_SETTLE_MS)
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
    await disconnect()
  },
})

interface Served {
  /** Resolves when the client went away, or the process was told to stop. */
  closed: Promise<void>
  close(): Promise<void>
}

const signalled = (resolve: () => void) => {
  process.once("SIGTERM", resolve)
  process.once("SIGINT", resolve)
}

/** Both revisions from one server: the client's opening (`server/discover` or `initialize`) picks one. */
function startStdio(open: OpenBackend, roles: string): Served {
  const transport = new GuardedStdioTransport()
  const closed = new Promise<void>((resolve) => {
    void transport.closed.then(resolve)
    // A client that goes away closes our stdin or signals us; stop then rather than linger.
    process.stdin.once("end", resolve)
    signalled(resolve)
  })
  const served = serveStdio(() => createServer(open, roles), { transport })
  return { closed, close: () => served.close() }
}

async function httpSetup(address: string, flags: Flags) {
  const { endpointToken, parseListen } = await import("../mcp/http")
  const listen = parseListen(address)
  const paths = resolvePaths(flags)
  await mkdir(paths.stateDir, { recursive: true, mode: 0o700 })
  return {
    listen,
    token: await endpointToken(`${paths.stateDir}/http-token`),
    tokenFile: `${paths.stateDir}/http-token`,
  }
}

/** Serves until signalled; the address and where the token is go to stderr for the person starting it. */
async function startHttp(
  setup: Awaited<ReturnType<typeof httpSetup>>,
  open: OpenBackend,
  roles: string,
): Promise<Served> {
  const { serveHttp } = await import("../mcp/http")
  const endpoint = serveHttp(setup.listen, setup.token, open, roles)
  console.error(`serving MCP on ${endpoint.url} (bearer token in ${setup.tokenFile})`)
  return { closed: new Promise<void>(signalled), close: endpoint.stop }
}

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
