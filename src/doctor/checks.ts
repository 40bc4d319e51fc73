// Doctor's checks as data: each one looks at one piece of an installation and says pass or fail,
// and on failure what to do. The runner (run.ts) decides the verdict; report.ts prints it.
import { access, constants } from "node:fs/promises"
import { searchPath } from "../config/flags"
import { stepLimits, timeoutLimits, ROLES } from "../config/schema"
import { renderAgents } from "../agents/render"
import { hashFile, sha256 } from "../install/manifest"
import { readText } from "../install/observe"
import { installedBinary } from "../install/payload"
import { PLUGIN_TEXT } from "../install/plugin-text"
import { discoverModels, type CatalogModel } from "../opencode/catalog"
import { blockingPlaces, opencodeConfigDirs } from "../opencode/config-files"
import { TESTED_OPENCODE, testedVersion } from "../opencode/guard"
import {
  bwrapReadiness,
  configModelReadiness,
  LAUNCHER_NAMES,
  launcherReadiness,
  opencodeConfigReadiness,
  stateDirReadiness,
  type Readiness,
} from "../engine/capacity"
import { applies } from "./applies"
import { lanes } from "./lanes"
import { stateFiles } from "./state-files"
import { failed, pass, REINSTALL, type Check, type CheckResult } from "./check"
import { claude, codex } from "./clients"
import { patches } from "./patches"
import { roles } from "./roles"

const RENDER = "Run `opencode-mcp-orchestrator install --yes` to render the agents from config.json again."
const asCheck = (found: Readiness): CheckResult =>
  found.ok ? pass(found.id, found.detail) : failed(found.id, found.detail, found.fix ?? "")

// The conditions serve refuses a delegation on (engine/capacity/readiness.ts), from the same functions.
const launchers: Check = async (ctx) =>
  Promise.all(LAUNCHER_NAMES.map(async (name) => asCheck(await launcherReadiness(name, ctx.launchers[name]))))
const bwrap: Check = async (ctx) => [asCheck(await bwrapReadiness(ctx.launchers.bwrap))]
const stateDir: Check = async (ctx) => [asCheck(await stateDirReadiness(ctx.paths.stateDir))]

// OpenCode's grep and glob tools run ripgrep from PATH, and download it when missing, which an
// offline machine cannot: a delegated agent would lose its search tools.
const ripgrep: Check = async (ctx) => {
  const found = Bun.which("rg", { PATH: searchPath(ctx.env) })
  return [
    found
      ? pass("ripgrep", found)
      : failed(
          "ripgrep",
          "rg (ripgrep) is not on PATH: OpenCode's grep and glob tools would try to download it.",
          "Install ripgrep (`apt-get install ripgrep`).",
        ),
  ]
}

// The plugin (and with it every sandboxed file access) is verified on this range only; outside it the
// MCP server refuses to delegate (opencode/guard.ts), and doctor says so first.
const opencodeVersion: Check = async (ctx) => {
  const result = await ctx.run([ctx.opencode, "--version"], { env: ctx.env, timeoutMs: 30_000 }).catch(() => undefined)
  const version = result?.code === 0 ? result.stdout.trim() : ""
  if (!version)
    return [
      failed(
        "opencode",
        `${ctx.opencode} --version did not answer.`,
        "Install OpenCode (npm install -g opencode-ai@1.18.33).",
      ),
    ]
  if (!testedVersion(version))
    return [
      failed(
        "opencode",
        `OpenCode ${version} is outside the tested range (>= ${TESTED_OPENCODE.min.join(".")}, < ` +
          `${TESTED_OPENCODE.belowMajor}); delegations are refused because the sandbox plugin may not load.`,
        "Install opencode-ai@1.18.33, or point OPENCODE_MCP_ORCHESTRATOR_OPENCODE at it.",
      ),
    ]
  return [pass("opencode", `OpenCode ${version}`)]
}

const core: Check = async (ctx) => {
  if (!ctx.manifest)
    return [
      failed(
        "core",
        `No installation: ${ctx.paths.installManifest} is missing.`,
        "Run `opencode-mcp-orchestrator install`.",
      ),
    ]
  const binary = installedBinary(ctx.paths)
  const recorded = ctx.manifest.files.find((f) => f.path === binary)
  const hash = await hashFile(binary)
  if (!hash) return [failed("core", `${binary} is missing.`, REINSTALL)]
  if (recorded && recorded.sha256 !== hash)
    return [failed("core", `${binary} differs from the installed binary.`, REINSTALL)]
  try {
    await access(binary, constants.X_OK)
  } catch {
    // The failure is the finding: the binary is not executable.
    return [failed("core", `${binary} is not executable.`, REINSTALL)]
  }
  return [pass("core", `${binary} (${ctx.manifest.appVersion})`)]
}

const opencodeConfig: Check = async (ctx) => [
  asCheck(await opencodeConfigReadiness(opencodeConfigDirs(ctx.paths.opencodeConfigDir, ctx.homes.home))),
]

const models: Check = async (ctx) => {
  const config = ctx.config!
  const chosen = ROLES.filter((role) => config.models[role])
  if (chosen.length === 0) return [pass("models", "every role uses OpenCode's default model")]
  // `opencode models` would never answer: the opencode-config check names what it would wait on.
  const blocking = await blockingPlaces(opencodeConfigDirs(ctx.paths.opencodeConfigDir, ctx.homes.home))
  if (blocking.length)
    return [{ id: "models", status: "skip", detail: "not asked: `opencode models` would wait (see opencode-config)" }]
  let catalog: CatalogModel[]
  try {
    catalog = await discoverModels(ctx.run, ctx.opencode, ctx.env, ctx.paths.opencodeDirsDir)
  } catch (error) {
    return [
      failed(
        "models",
        error instanceof Error ? error.message : String(error),
        "Make `opencode models` work (install OpenCode, connect a provider).",
      ),
    ]
  }
  return ROLES.map((role) => asCheck(configModelReadiness(role, config, catalog, ctx.paths.configFile)))
}

const profiles: Check = async (ctx) => {
  const config = ctx.config!
  const steps = stepLimits(config)
  const times = timeoutLimits(config)
  return [
    pass(
      "steps",
      `${config.stepLimits?.profile ?? "standard"}: scout ${steps.scout}, worker ${steps.worker}, runner ` +
        `${steps.runner}`,
    ),
    pass(
      "timeouts",
      `${config.timeoutLimits?.profile ?? "standard"}: scout ${times.scout}s, worker ${times.worker}s, runner ` +
        `${times.runner}s, parent ${times.parent}s`,
    ),
  ]
}

/** The `steps:` value in an agent file's frontmatter. */
const agentSteps = (text: string) =>
  Number(text.match(/^---\n[\s\S]*?^steps:\s*(\d+)\s*$[\s\S]*?^---$/m)?.[1] ?? Number.NaN)

const agents: Check = async (ctx) =>
  Promise.all(
    renderAgents(ctx.config!).map(async (agent) => {
      const path = `${ctx.paths.opencodeAgentsDir}/${agent.file}`
      const id = `agent:${agent.name}`
      const text = await readText(path)
      if (text === undefined) return failed(id, `${path} is missing.`, REINSTALL)
      const steps = agentSteps(text)
      if (steps !== agent.steps)
        return failed(
          id,
          `${path} has steps ${Number.isNaN(steps) ? "(none)" : steps}, but the config gives ${agent.role} ` +
            `${agent.steps}.`,
          REINSTALL,
        )
      if (text !== agent.content) {
        // As install wrote it: config.json changed since (a model, variant or permission), not the file.
        const written = ctx.manifest?.files.find((file) => file.path === path)?.sha256
        if (written === sha256(text))
          return failed(
            id,
            `${path} was rendered from an earlier config.json (a model, variant or permission changed since).`,
            RENDER,
          )
        return failed(
          id,
          `${path} was edited after install.`,
          `Move your edits elsewhere, delete ${path}, and rerun \`opencode-mcp-orchestrator install --yes\`.`,
        )
      }
      return pass(id, `steps ${steps}`)
    }),
  )

const plugin: Check = async (ctx) => {
  const path = ctx.paths.opencodePluginFile
  const hash = await hashFile(path)
  if (!hash) return [failed("plugin", `${path} is missing.`, REINSTALL)]
  if (hash !== sha256(PLUGIN_TEXT))
    return [
      failed(
        "plugin",
        `${path} is not the plugin this binary carries.`,
        `Delete ${path} and rerun \`opencode-mcp-orchestrator install --yes\`.`,
      ),
    ]
  return [pass("plugin", path)]
}

/** Every installation check in report order, with what it waits on; those needing a config run only when it loaded. */
export const CHECKS: Array<{ check: Check; needsConfig: boolean; waitingFor: string }> = [
  { check: launchers, needsConfig: false, waitingFor: "the sandbox's launchers" },
  { check: bwrap, needsConfig: false, waitingFor: "`bwrap --version`" },
  { check: stateDir, needsConfig: false, waitingFor: "the state dir" },
  { check: ripgrep, needsConfig: false, waitingFor: "ripgrep on PATH" },
  { check: opencodeVersion, needsConfig: false, waitingFor: "`opencode --version`" },
  { check: opencodeConfig, needsConfig: false, waitingFor: "OpenCode's config dirs" },
  { check: core, needsConfig: false, waitingFor: "the installed binary" },
  // The first OpenCode start after install fetches the plugin's npm package into its config dir.
  // OpenCode waits on its npm install of @opencode-ai/plugin before loading plugins, unless install
  // provisioned it (src/install/plugin-deps.ts); say so, since offline it retries for about 70 s.
  {
    check: models,
    needsConfig: true,
    waitingFor: "`opencode models` (OpenCode may be fetching @opencode-ai/plugin from npm into its config dir)",
  },
  { check: profiles, needsConfig: true, waitingFor: "the step and timeout profiles" },
  { check: agents, needsConfig: true, waitingFor: "the agent files" },
  { check: roles, needsConfig: true, waitingFor: "your roles' prompt files and subagent files" },
  { check: plugin, needsConfig: false, waitingFor: "the plugin file" },
  { check: codex, needsConfig: true, waitingFor: "Codex's registration" },
  { check: claude, needsConfig: true, waitingFor: "Claude Code's registration" },
  { check: patches, needsConfig: false, waitingFor: "the worker patches" },
  { check: stateFiles, needsConfig: false, waitingFor: "the task and patch records" },
  { check: lanes, needsConfig: false, waitingFor: "the worktree lanes" },
  { check: applies, needsConfig: false, waitingFor: "interrupted patch applies" },
]
