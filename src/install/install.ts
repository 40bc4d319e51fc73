// `install`: prerequisites → existing config and manifest → models from OpenCode → choices (flags or
// wizard) → plan → (dry run stops here) → confirm → apply → config.json → manifest → doctor.
// Every effect comes in through InstallDeps; src/cli/install.ts fills in the real ones.
import type { Env } from "../config/flags"
import { loadConfig } from "../config/load"
import type { Paths } from "../config/paths"
import { timeoutLimits } from "../config/schema"
import { fail } from "../errors"
import { discoverModels } from "../opencode/catalog"
import { blockingPlaces, blockingText, opencodeConfigDirs } from "../opencode/config-files"
import { prerequisiteFindings, withScratchStandIns, type Launchers } from "../sandbox"
import { writeAtomic } from "../util/fs"
import type { Run } from "../util/process"
import { applyClients, applyFiles, type ApplyDeps } from "./apply"
import { checkModels, choicesFromFlags, configFromChoices, type FlagValues } from "./choices"
import { codexConfigFile, findClient, pruneStops, type ClientHomes } from "./homes"
import { claudeMatches } from "./integrations/claude"
import type { McpEntry } from "./integrations/codex"
import { hashFile, readManifestForInstall, writeManifest, type ManagedFile } from "./manifest"
import { observe } from "./observe"
import { desiredFiles, serveCommand } from "./payload"
import { provisionDirs } from "./plugin-deps"
import { INTEGRATIONS, planInstall, type ClientState, type Integration, type Observed } from "./plan"
import { defaultModelNotes, formatInstallPlan, preservedCount } from "./report"
import { adoptManifest, formatSkipped, installScope } from "./scope"
import { describeRetired, retireSharedServer } from "./server"
import { CANCEL, runWizard, type Prompter } from "./wizard"

export interface InstallDeps {
  paths: Paths
  homes: ClientHomes
  env: Env
  run: Run
  launchers: Launchers
  opencode: string
  /** The binary to copy into current/ (the running one when compiled). */
  binary?: string
  appVersion: string
  /** Present when interactive; absent with --yes or without a terminal. */
  prompter?: Prompter
  print: (line: string) => void
  /** Runs doctor, prints its report and returns its exit code. */
  doctor: () => Promise<number>
  now?: () => Date
}

export interface InstallOptions extends FlagValues {
  dryRun?: boolean
  /** Claude Code: load our tools up front (its per-server `alwaysLoad`); kept once an entry has it. */
  claudeAlwaysLoad?: boolean
  /** Codex: run our tools without a prompt per call (`default_tools_approval_mode`); kept once an entry has it. */
  codexApprove?: boolean
}

export function clientState(paths: Paths, entry: McpEntry, observed: Observed): ClientState {
  const isOurs = (command: string) => command.startsWith(`${paths.dataDir}/`)
  return {
    entry,
    isOurs,
    matches: (client) => {
      if (client === "claude") return claudeMatches(observed.claudeEntry, entry)
      const found = observed.codexEntry
      return (
        !!found &&
        found.command === entry.command &&
        Bun.deepEquals(found.args, entry.args) &&
        found.tool_timeout_sec === entry.timeoutSec &&
        (found.default_tools_approval_mode === "approve") === (entry.approveTools === true)
      )
    },
  }
}

async function checkPrerequisites(deps: InstallDeps): Promise<void> {
  const failed = (await prerequisiteFindings(deps.launchers)).filter((f) => !f.ok)
  if (failed.length)
    throw fail(
      "Prerequisite",
      `Prerequisites missing:\n${failed.map((f) => `  - ${f.detail}`).join("\n")}`,
      failed
        .map((f) => f.fix)
        .filter(Boolean)
        .join("\n  → "),
    )
}

export async function install(deps: InstallDeps, options: InstallOptions): Promise<number> {
  const { paths, homes, print } = deps
  await checkPrerequisites(deps)
  if (!deps.binary)
    throw fail(
      "Usage",
      "No binary to install: this is not the compiled opencode-mcp-orchestrator.",
      "Run the released binary's `install`, or pass --binary PATH (e.g. dist/opencode-mcp-orchestrator after `bun " +
        "run build`).",
    )
  const hasConfig = await Bun.file(paths.configFile).exists()
  const existing = await loadConfig(paths.configFile)
  const scope = installScope(paths, homes)
  const read = await readManifestForInstall(paths.installManifest)
  if (read.setAside)
    print(
      `The install manifest could not be read (${read.setAside.reason}); moved to ${read.setAside.movedTo}. ` +
        `${read.setAside.fix}`,
    )
  if (read.value?.home && read.value.home !== homes.home)
    print(
      `The install manifest was written for HOME ${read.value.home}: its files there are taken as this HOME's ` +
        `copies; nothing outside ${homes.home} is touched.`,
    )
  const { manifest, skipped } = adoptManifest(read.value, scope, homes)
  for (const line of formatSkipped(skipped)) print(line)
  if (manifest)
    print(
      `Found an earlier installation (${manifest.appVersion}, ${manifest.installedAt}); it will be replaced, your ` +
        `config kept.`,
    )
  const claude = findClient(homes, "claude")
  const detected = INTEGRATIONS.filter((name) => findClient(homes, name))
  const blocking = await blockingPlaces(opencodeConfigDirs(paths.opencodeConfigDir, homes.home))
  if (blocking.length) {
    const { problem, fix } = blockingText(blocking)
    throw fail("Prerequisite", problem, `${fix} and rerun install; nothing was changed.`)
  }
  // Read before anything is confirmed: OpenCode runs in a scratch stand-in, so a cancelled install has
  // written nothing under HOME (the state dir is made once the plan is applied).
  const catalog = await withScratchStandIns((root) => discoverModels(deps.run, deps.opencode, deps.env, root))
  let choices = choicesFromFlags(options, existing, detected, hasConfig)
  if (deps.prompter) {
    const answered = await runWizard(deps.prompter, { catalog, detected, start: choices })
    if (answered === CANCEL) return cancelled(print)
    choices = answered
  }
  checkModels(choices, catalog)
  if (choices.integrations.includes("claude") && !claude)
    throw fail(
      "Prerequisite",
      "The Claude Code integration needs the `claude` CLI, which is not on PATH.",
      "Install Claude Code, or leave claude out of --integrations.",
    )
  const config = configFromChoices(existing, choices, paths.configFile)
  const binaryHash = await hashFile(deps.binary)
  if (!binaryHash)
    throw fail(
      "Usage",
      `--binary ${deps.binary} is not a readable file.`,
      "Point --binary at the compiled opencode-mcp-orchestrator.",
    )
  const desired = desiredFiles({
    config,
    paths,
    homes,
    binary: { source: deps.binary, sha256: binaryHash },
    pluginDependencyDirs: await provisionDirs(paths.opencodeConfigDir, homes, manifest),
  })
  const observed = await observe(
    homes,
    manifest,
    desired.map((f) => f.path),
  )
  const alwaysLoad = options.claudeAlwaysLoad === true || observed.claudeEntry?.alwaysLoad === true
  const approveTools =
    options.codexApprove === true ||
    choices.codexApprove === true ||
    observed.codexEntry?.default_tools_approval_mode === "approve"
  const entry: McpEntry = { ...serveCommand(paths), timeoutSec: timeoutLimits(config).parent, alwaysLoad, approveTools }
  const previous: Integration[] = [
    ...new Set([...(manifest?.integrations ?? []), ...(hasConfig ? existing.integrations : [])]),
  ]
  const registrations = { codex: { configFile: codexConfigFile(homes) }, claude: { configDir: homes.claudeConfigDir } }
  const plan = planInstall({
    config,
    desired,
    observed,
    previous,
    clients: clientState(paths, entry, observed),
    appVersion: deps.appVersion,
    registrations,
  })
  for (const line of formatInstallPlan(plan, homes.home, !!claude)) print(line)
  print(`Config: ${paths.configFile}${hasConfig ? " (kept; updated with these choices)" : " (new)"}`)
  if (!deps.prompter) for (const line of defaultModelNotes(config)) print(line)
  if (options.dryRun) {
    print("Dry run: nothing was changed.")
    return 0
  }
  if (deps.prompter) {
    const go = await deps.prompter.confirm({ message: "Apply these changes?", initialValue: true })
    if (go === CANCEL || !go) return cancelled(print)
  }
  const recorded = new Map<string, ManagedFile>((manifest?.files ?? []).map((f) => [f.path, f]))
  const applyDeps: ApplyDeps = { homes, run: deps.run, env: deps.env, claude }
  const stops = pruneStops(paths.dataDir, paths.opencodeConfigDir, homes)
  try {
    for (const line of formatSkipped(await applyFiles(plan.files, recorded, stops, scope))) print(line)
    await applyClients(plan.clients, applyDeps, manifest?.registrations.codex?.configFile)
    await writeAtomic(paths.configFile, `${JSON.stringify(config, null, 2)}\n`)
  } finally {
    const now = (deps.now ?? (() => new Date()))().toISOString()
    await writeManifest(paths.installManifest, {
      ...plan.manifest,
      home: homes.home,
      installedAt: now,
      files: [...recorded.values()],
    })
  }
  const retired = describeRetired(await retireSharedServer(paths), "install")
  if (retired) print(retired)
  const kept = preservedCount(plan.files)
  print(
    `Installed ${deps.appVersion} into ` +
      `${paths.current}.${kept ? ` ${kept} locally modified file(s) preserved (listed above).` : ""}`,
  )
  return deps.doctor()
}

function cancelled(print: (line: string) => void): number {
  print("Install cancelled; nothing was changed.")
  return 1
}
