// `install`: the wizard on a terminal, or the same choices as flags with --yes. The work is in
// src/install; this file parses arguments and fills in the real dependencies.
import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { resolvePaths } from "../config/paths"
import { LAUNCHERS } from "../sandbox"
import { fail } from "../engine"
import { roleArg } from "../install/choices"
import { clackPrompter } from "../install/clack"
import { clientHomes } from "../install/homes"
import { install } from "../install/install"
import { run } from "../util/process"
import { VERSION } from "../version"
import { doctor } from "./doctor"

// Inside the compiled binary the entry module lives in Bun's embedded file system.
const compiled = () => Bun.main.startsWith("/$bunfs/")

export default defineCommand({
  meta: {
    name: "install",
    description: "Install or update: OpenCode agents and plugin, Codex / Claude Code registrations, config.json.",
  },
  args: {
    yes: {
      type: "boolean",
      alias: "y",
      default: false,
      description: "No questions: use the flags and the existing config.",
    },
    models: {
      type: "string",
      multiple: true,
      description: "Models per role: scout=P/M,worker=P/M,runner=P/M (or one P/M for all).",
    },
    variants: {
      type: "string",
      multiple: true,
      description: "Variants per role: scout=V,worker=V,runner=V (default = OpenCode decides).",
    },
    steps: { type: "string", description: "Step profile: standard, extended or custom:S,W,R." },
    timeouts: { type: "string", description: "Timeout profile: standard, extended or custom:S,W,R,PARENT (seconds)." },
    integrations: { type: "string", description: "Clients to register with: codex,claude (or none)." },
    "claude-always-load": {
      type: "boolean",
      default: false,
      description: "Claude Code: offer our tools up front instead of behind its tool search (alwaysLoad).",
    },
    "codex-approve": {
      type: "boolean",
      default: false,
      description: "Codex: run our tools without a prompt per call (default_tools_approval_mode = approve).",
    },
    "dry-run": { type: "boolean", default: false, description: "Print the plan and change nothing." },
    binary: { type: "string", description: "Binary to install into current/ (default: this one, when compiled)." },
    "sandbox-probes": {
      type: "boolean",
      default: true,
      description: "Run doctor's sandbox probes at the end (--no-sandbox-probes skips them).",
    },
  },
  async run({ args, rawArgs }) {
    const flags = flagsFromProcess()
    const interactive = !args.yes && process.stdin.isTTY === true && process.stdout.isTTY === true
    if (!args.yes && !interactive)
      throw fail(
        "Usage",
        "install has no terminal to ask questions on.",
        "Pass --yes (with --models, --steps, --integrations … as needed) to install without questions.",
      )
    process.exitCode = await install(
      {
        paths: resolvePaths(flags),
        homes: clientHomes(flags),
        env: flags.env,
        run,
        launchers: LAUNCHERS,
        opencode: flags.opencodeBin,
        binary: args.binary ?? (compiled() ? process.execPath : undefined),
        appVersion: VERSION,
        prompter: interactive ? clackPrompter : undefined,
        print: (line) => console.log(line),
        doctor: () => doctor(flags, { sandboxProbes: args["sandbox-probes"], live: false, json: false }),
      },
      {
        models: roleArg(rawArgs, "models"),
        variants: roleArg(rawArgs, "variants"),
        steps: args.steps,
        timeouts: args.timeouts,
        integrations: args.integrations,
        dryRun: args["dry-run"],
        claudeAlwaysLoad: args["claude-always-load"],
        codexApprove: args["codex-approve"],
      },
    )
  },
})
