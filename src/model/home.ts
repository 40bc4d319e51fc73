// An isolated home for a run against the scripted model: its own HOME and XDG dirs, an OpenCode
// config that routes every role to the scripted provider (and nothing else), the rendered agents,
// the plugin, and this program's config. Used by `demo`, `doctor --live` and the tests, so each
// exercises the real OpenCode, agents and plugin without an account or network.
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { type Env, readFlags } from "../config/flags"
import { resolvePaths, type Paths } from "../config/paths"
import { ConfigSchema, type ConfigInput } from "../config/schema"
import { renderAgents } from "../agents/render"
import { pluginSource } from "../templates/plugin"
import { writeJson, writeAtomic } from "../util/fs"
import { opencodeProviderConfig, SCRIPTED_PROVIDER } from "./provider"

export interface IsolatedHome {
  root: string
  env: Env
  paths: Paths
  dispose(): Promise<void>
}

export interface HomeOptions {
  /** The scripted model's base URL (…/v1). */
  modelUrl: string
  /** Overrides for this program's config (models default to the scripted provider's). */
  config?: Partial<ConfigInput>
  /** Extra variables, e.g. PATH with the pinned opencode. */
  env?: Env
  /** XDG_CONFIG_HOME relative to the home, when not `.config` (a relocated config base). */
  configDir?: string
  /** Parent directory for the temp dir. */
  parent?: string
  /** More OpenCode providers routed to the scripted model (see ProviderOptions.more). */
  providers?: Record<string, readonly string[]>
}

/** Variables that keep OpenCode offline and away from the user's own setup. */
const OPENCODE_QUIET_ENV: Env = {
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
}

export async function createIsolatedHome(options: HomeOptions): Promise<IsolatedHome> {
  const root = await mkdtemp(`${options.parent ?? tmpdir()}/oc-orch-home-`)
  const catalog = `${root}/models-catalog.json`
  const env: Env = {
    ...options.env,
    ...OPENCODE_QUIET_ENV,
    HOME: root,
    XDG_CONFIG_HOME: `${root}/${options.configDir ?? ".config"}`,
    XDG_DATA_HOME: `${root}/.local/share`,
    XDG_STATE_HOME: `${root}/.local/state`,
    XDG_CACHE_HOME: `${root}/.cache`,
    // The scripted provider is declared whole in the config, and `enabled_providers` hides every other, so
    // models.dev's catalog of real providers (bundled in OpenCode, read when no cache file is there) is never
    // shown here; parsing it cost about 2 CPU-s at each server's first catalog read and again in each new
    // directory (`bun run bench --only catalog`). The home pins an empty one.
    OPENCODE_MODELS_PATH: catalog,
  }
  const paths = resolvePaths(readFlags(env))
  const model = `${SCRIPTED_PROVIDER}/fast`
  const config = ConfigSchema.parse({
    version: 1,
    models: { scout: model, worker: model, runner: model },
    ...options.config,
  })
  await mkdir(paths.opencodeAgentsDir, { recursive: true })
  await writeJson(catalog, {})
  await writeJson(`${paths.opencodeConfigDir}/opencode.json`, {
    $schema: "https://opencode.ai/config.json",
    ...opencodeProviderConfig(options.modelUrl, { more: options.providers }),
    autoupdate: false,
    share: "disabled",
  })
  await writeJson(paths.configFile, config)
  for (const agent of renderAgents(config)) await writeAtomic(`${paths.opencodeAgentsDir}/${agent.file}`, agent.content)
  await writeAtomic(paths.opencodePluginFile, pluginSource)
  await seedPluginDependencies(paths.opencodeConfigDir)
  return { root, env, paths, dispose: () => rm(root, { recursive: true, force: true }) }
}

// OpenCode installs @opencode-ai/plugin into every config dir before it loads plugins (about 20 s,
// and it needs the npm registry). Our plugin is one bundled file with no imports, so a throwaway home
// marks the dependency as present: OpenCode skips the install when node_modules exists and
// package-lock.json's root lists every dependency it would add (checked in opencode 1.18.33).
export const PLUGIN_DEPENDENCY_LOCK = {
  lockfileVersion: 3,
  packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } },
}

export async function seedPluginDependencies(configDir: string) {
  await mkdir(`${configDir}/node_modules`, { recursive: true })
  await writeJson(`${configDir}/package-lock.json`, PLUGIN_DEPENDENCY_LOCK)
}
