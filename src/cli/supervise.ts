import { defineCommand } from "citty"
import { readFlags } from "../config/flags"
import { Delegations } from "../engine/lifecycle"
import { installRecovery } from "../engine/recovery"
import { Runtime } from "../engine/runtime"
import { releaseLease, takeLease } from "../opencode/lease"
import { alive } from "../util/process"

// Started detached by `serve` when its client leaves while tasks run (a client that goes away kills its
// MCP server within seconds). It holds a lease so the shared server stays, waits for that `serve` to be
// gone, re-attaches to the tasks it left (recovery), keeps their deadlines, and leaves once every one has
// settled, stopping the shared server if nobody else needs it. Not for people: no output, no options.
export default defineCommand({
  meta: { name: "supervise", description: "Internal: finish the tasks of an MCP server whose client left." },
  args: { parent: { type: "string", required: true, description: "PID of the serve process handing over." } },
  async run({ args }) {
    const runtime = new Runtime(readFlags(process.env))
    await takeLease(runtime.paths)
    const parent = Number(args.parent)
    const deadline = Date.now() + 30_000
    while (alive(parent) && Date.now() < deadline) await Bun.sleep(100)
    const delegations = new Delegations(runtime)
    await installRecovery(delegations)
    await delegations.settled()
    runtime.close()
    await releaseLease(runtime.paths, false)
  },
})
