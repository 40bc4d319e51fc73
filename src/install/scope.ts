// What an install, reinstall or uninstall may remove: the files it writes for the HOME and XDG dirs
// it serves, nothing else. The manifest names paths, but a manifest can come from elsewhere (a
// home copied with `cp -a`, a restored backup, an edit): a recorded path outside these directories is
// never removed, only reported as skipped.
//
// A manifest records the HOME it was written for. One written for another HOME is foreign: its paths
// under that HOME are re-derived under this one (the copied home holds the copies of those files,
// with the recorded hashes), and every other path it names is dropped. Then every path must lie
// lexically inside one of the places below, under a name of ours, and (checked on disk before a
// removal) must still be there once symlinks are resolved. XDG dirs outside HOME are not re-derived.
import { realpath } from "node:fs/promises"
import { basename, dirname, normalize } from "node:path"
import { AGENT_PREFIX } from "../agents/names"
import type { Paths } from "../config/paths"
import { opencodeConfigDirs } from "../opencode/config-files"
import { claudeSkillFile, codexConfigFile, codexSkillFile, type ClientHomes } from "./homes"
import { pluginDependencyFiles } from "./plugin-deps"
import type { InstallManifest } from "./manifest"

export interface InstallScope {
  home: string
  /** Where an install writes: a directory and which names in it are ours (`deep`: anything below it). */
  places: Array<{ dir: string; ours: (name: string) => boolean; deep?: boolean }>
}

export interface Skipped {
  path: string
  reason: string
}

const exactly = (file: string) => ({ dir: dirname(file), ours: (name: string) => name === basename(file) })

export function installScope(paths: Paths, homes: ClientHomes): InstallScope {
  return {
    home: homes.home,
    places: [
      { dir: paths.dataDir, ours: () => true, deep: true },
      // The agents dir is shared with the user's own agents: only ours by name.
      { dir: paths.opencodeAgentsDir, ours: (name) => name.startsWith(AGENT_PREFIX) && name.endsWith(".md") },
      exactly(paths.opencodePluginFile),
      ...opencodeConfigDirs(paths.opencodeConfigDir, homes.home).flatMap((dir) =>
        pluginDependencyFiles(dir).map((file) => exactly(file.path)),
      ),
      exactly(codexSkillFile(homes)),
      exactly(claudeSkillFile(homes)),
    ],
  }
}

/** The place `path` belongs to: absolute, no `.`/`..`/`//` in it, and a name of ours in one of the places. */
function placeOf(scope: InstallScope, path: string) {
  if (!path.startsWith("/") || normalize(path) !== path) return undefined
  return scope.places.find((place) => {
    if (!path.startsWith(`${place.dir}/`)) return false
    const rest = path.slice(place.dir.length + 1)
    return place.deep ? rest.length > 0 : !rest.includes("/") && place.ours(rest)
  })
}

export const insideScope = (scope: InstallScope, path: string) => placeOf(scope, path) !== undefined

const OUTSIDE = "it lies outside the directories this install manages for this HOME"

/** `path` moved from the manifest's HOME to this one, when it lay under that HOME. */
function rehome(path: string, from: string | undefined, to: string): string {
  if (!from || from === to || !path.startsWith(`${from}/`)) return path
  return `${to}${path.slice(from.length)}`
}

/**
 * The manifest as this install may use it: paths re-derived from the HOME it was written for, and
 * only those inside the scope; the rest are returned as skipped, with why.
 */
export function adoptManifest(
  manifest: InstallManifest | undefined,
  scope: InstallScope,
  homes: ClientHomes,
): { manifest?: InstallManifest; skipped: Skipped[] } {
  if (!manifest) return { skipped: [] }
  const skipped: Skipped[] = []
  const files = manifest.files.flatMap((file) => {
    const path = rehome(file.path, manifest.home, scope.home)
    if (insideScope(scope, path)) return [{ ...file, path }]
    skipped.push({ path: file.path, reason: OUTSIDE })
    return []
  })
  // The Codex registration is edited in place: only the config file of this HOME's Codex.
  const recorded = manifest.registrations.codex
  const codexFile = recorded && rehome(recorded.configFile, manifest.home, scope.home)
  const inHome =
    !!codexFile &&
    normalize(codexFile) === codexFile &&
    codexFile.startsWith(`${scope.home}/`) &&
    codexFile.endsWith("/config.toml")
  const codex = codexFile && (codexFile === codexConfigFile(homes) || inHome) ? { configFile: codexFile } : undefined
  if (recorded && !codex) skipped.push({ path: recorded.configFile, reason: "it is not the Codex config of this HOME" })
  return {
    manifest: { ...manifest, home: scope.home, files, registrations: { ...manifest.registrations, codex } },
    skipped,
  }
}

/**
 * True when `path` is still inside the scope with symlinks resolved: a directory on its way swapped
 * for a link elsewhere (to the home this one was copied from, to /etc) is not followed for a removal.
 */
export async function removable(scope: InstallScope, path: string): Promise<boolean> {
  const place = placeOf(scope, path)
  if (!place) return false
  const real = await realpath(dirname(path)).catch(() => undefined) // no such directory: nothing to remove there
  const realDir = await realpath(place.dir).catch(() => undefined) // a place that does not exist holds nothing
  if (!real || !realDir) return false
  return place.deep ? real === realDir || real.startsWith(`${realDir}/`) : real === realDir
}

export const formatSkipped = (skipped: Skipped[]) =>
  skipped.map((entry) => `SKIP ${entry.path}: ${entry.reason}; left untouched.`)
