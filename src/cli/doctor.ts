// `doctor`: checks an installation and ends with DOCTOR_HEALTHY, DOCTOR_READINESS_UNVERIFIED
// (--no-sandbox-probes) or DOCTOR_UNHEALTHY (exit 1). Builds the real dependencies from the environment.
import { defineCommand } from "citty"
import { flagsFromProcess, type Flags } from "../config/flags"
import { resolvePaths } from "../config/paths"
import { LAUNCHERS } from "../sandbox"
import { liveCheck } from "../doctor/live"
import { sandboxChecks } from "../doctor/probes"
import { exitCodeOf, type DoctorDeps } from "../doctor/run"
import { streamDoctor } from "../doctor/stream"
import { clientHomes } from "../install/homes"
import { run } from "../util/process"

function doctorDeps(flags: Flags): DoctorDeps {
  const launchers = LAUNCHERS
  return {
    paths: resolvePaths(flags),
    homes: clientHomes(flags),
    launchers,
    run,
    opencode: flags.opencodeBin,
    env: flags.env,
    probes: (config) => sandboxChecks({ flags, config, bwrap: launchers.bwrap, tmpRoot: flags.tmpDir }),
    live: () => liveCheck(flags.env),
  }
}

/** Runs doctor, prints the report and returns the exit code (install ends with this too). */
export async function doctor(
  flags: Flags,
  options: { sandboxProbes: boolean; live: boolean; json: boolean },
): Promise<number> {
  const out = {
    line: (text: string) => console.log(text),
    progress: (text: string) => (options.json ? console.error(text) : console.log(text)),
  }
  return exitCodeOf(await streamDoctor(doctorDeps(flags), options, out))
}

export default defineCommand({
  meta: {
    name: "doctor",
    description: "Check the installation: launchers, bwrap, files, models, agents, plugin, integrations, sandbox.",
  },
  args: {
    "sandbox-probes": {
      type: "boolean",
      default: true,
      description:
        "Run the sandbox probes (--no-sandbox-probes skips them; the verdict is then DOCTOR_READINESS_UNVERIFIED " +
        "at best).",
    },
    live: {
      type: "boolean",
      default: false,
      description: "Also send one delegation through OpenCode with the scripted model.",
    },
    json: { type: "boolean", default: false, description: "Print the report as JSON." },
  },
  async run({ args }) {
    process.exitCode = await doctor(flagsFromProcess(), {
      sandboxProbes: args["sandbox-probes"],
      live: args.live,
      json: args.json,
    })
  },
})
