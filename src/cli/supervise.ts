import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { resolvePaths } from "../config/paths"
import { releaseLease, takeLease } from "../opencode/lease"
import { alive } from "../util/process"

// Started detached by `serve` with its first task, as its watchdog (a client that goes away kills its MCP
// server within seconds, and SIGKILL leaves no time to hand anything over). It holds a lease so the
// shared server stays, waits for that `serve` to be gone, re-attaches to the tasks it left (recovery),
// keeps their deadlines, and leaves once every one has settled, stopping the shared server if nobody
// else needs it. Not for people: no output, no options. While it waits (most of its life) it holds only
// the lease and the modules that take it: the engine is loaded once there is something to take over.
export default defineCommand({
  meta: { name: "supervise", description: "Internal: finish the tasks of an MCP server whose client left." },
  args: { parent: { type: "string", required: true, description: "PID of the serve process handing over." } },
  async run({ args }) {
    const flags = flagsFromProcess()
    await takeLease(resolvePaths(flags))
    // Watch the serve process for as long as it lives; then take over what it left running.
    const parent = Number(args.parent)
    while (alive(parent)) await Bun.sleep(500)
    const [{ Runtime }, { Delegations }] = await Promise.all([
      import("../engine/capacity"),
      import("../engine/lifecycle"),
    ])
    const runtime = new Runtime(flags)
    const delegations = new Delegations(runtime, { recover: true, retention: true })
    await delegations.settled()
    // An outcome a full disk kept from being written gets a minute for room to appear.
    await delegations.flushed(60_000)
    delegations.retention?.stop()
    // What this process used would otherwise stay in the shared server until it stops.
    await runtime.releaseInstances()
    runtime.close()
    await releaseLease(runtime.paths, false)
  },
})
