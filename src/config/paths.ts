// Every path the program uses, computed from the environment alone, so a test moves the whole
// program to a temporary HOME by setting HOME and the XDG variables.
import type { Flags } from "./flags"

export const APP = "opencode-mcp-orchestrator"

export function resolvePaths(
  flags: Pick<Flags, "home" | "xdgConfigHome" | "xdgDataHome" | "xdgStateHome" | "xdgCacheHome">,
) {
  const config = `${flags.xdgConfigHome}/${APP}`
  const data = `${flags.xdgDataHome}/${APP}`
  const state = `${flags.xdgStateHome}/${APP}`
  const cache = `${flags.xdgCacheHome}/${APP}`
  const opencodeConfig = `${flags.xdgConfigHome}/opencode`
  return {
    home: flags.home,
    configDir: config,
    configFile: `${config}/config.json`,
    dataDir: data,
    current: `${data}/current`,
    installManifest: `${data}/install-manifest.json`,
    stateDir: state,
    tasksDir: `${state}/tasks`,
    locksDir: `${state}/locks`,
    leasesDir: `${state}/leases`,
    runsDir: `${state}/runs`,
    /**
     * The check's definition as each verified task started (workspace/snapshot/frozen.ts): `<task>.tar` and
     * `<task>.json`.
     */
    frozenDir: `${state}/frozen`,
    /** The machine-wide concurrency slots of delegate_parallel (engine/capacity/slots.ts) and their queue. */
    slotsDir: `${state}/slots`,
    /** Who drives each task now (engine/records/owners.ts): one claim per task, taken before a takeover acts. */
    ownersDir: `${state}/owners`,
    /**
     * Who uses, or is releasing, each directory's instance on the shared server
     * (engine/capacity/instance-marks.ts).
     */
    instancesDir: `${state}/instances`,
    /**
     * The sensitive markers each directory had (engine/admission/mode-memory.ts): a missing one counts
     * until released.
     */
    modesDir: `${state}/modes`,
    /** What OpenCode is given instead of each workspace (sandbox/stand-ins.ts): its plugin walk meets only ours. */
    opencodeDirsDir: `${state}/opencode-dirs`,
    /** delegate_parallel groups: which tasks one call started. */
    groupsDir: `${state}/groups`,
    /** Patches from isolated workers (`<id>.json` + `<id>.patch`); an entry is also the registry of its worktree. */
    patchesDir: `${state}/patches`,
    serverFile: `${state}/server.json`,
    serverLock: `${state}/server.lock`,
    serverLog: `${state}/server.log`,
    supervisorLog: `${state}/supervisor.log`,
    cacheDir: cache,
    worktreesDir: `${cache}/worktrees`,
    opencodeConfigDir: opencodeConfig,
    /** OpenCode's own database, snapshot repositories and logs (copies of workspace files): kept private. */
    opencodeDataDir: `${flags.xdgDataHome}/opencode`,
    opencodeStateDir: `${flags.xdgStateHome}/opencode`,
    opencodeAgentsDir: `${opencodeConfig}/agents`,
    opencodePluginFile: `${opencodeConfig}/plugins/${APP}.js`,
  }
}

export type Paths = ReturnType<typeof resolvePaths>
