// What OpenCode would fetch the first time it loads our plugin, provisioned so that start needs no
// network. OpenCode 1.18.33 (its Npm.install) runs `npm install @opencode-ai/plugin@<its version>` in
// every config dir it reads (~/.config/opencode, and ~/.opencode when that exists) and, when there are
// plugins, waits for all of them before loading any: ~70 s of registry retries on a machine without
// network, then the plugin loads anyway. It skips the install when node_modules/ exists and
// package-lock.json's root lists every dependency of package.json plus @opencode-ai/plugin (names
// only; versions and node_modules' contents are not checked). Our plugin is one bundled file with no
// imports, so it needs none of the package: the install writes the files OpenCode's own install leaves
// at the root, and a later `npm install` in that dir completes them.
import { lstat, readdir } from "node:fs/promises"
import { opencodeHomeDir, type ClientHomes } from "./homes"
import type { InstallManifest } from "./manifest"

/** The OpenCode release this was read from; it asks for @opencode-ai/plugin at its own version. */
export const PLUGIN_PACKAGE = { name: "@opencode-ai/plugin", version: "1.18.33" } as const

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`
const dependencies = { [PLUGIN_PACKAGE.name]: PLUGIN_PACKAGE.version }

/** Path → text, in write order: node_modules/ last, so its presence means the lockfile is there. */
export function pluginDependencyFiles(configDir: string): { path: string; text: string }[] {
  return [
    { path: `${configDir}/package.json`, text: json({ dependencies }) },
    {
      path: `${configDir}/package-lock.json`,
      text: json({ name: "opencode", lockfileVersion: 3, requires: true, packages: { "": { dependencies } } }),
    },
    // npm's hidden lockfile: nothing is installed, which is the truth; it makes node_modules/ exist.
    {
      path: `${configDir}/node_modules/.package-lock.json`,
      text: json({ name: "opencode", lockfileVersion: 3, requires: true, packages: {} }),
    },
  ]
}

/** What is at `path` without following a symlink: a swapped-in link counts as something there. */
async function kind(path: string): Promise<{ is: "none" | "file" | "dir" | "other"; size: number }> {
  try {
    const found = await lstat(path)
    return { is: found.isFile() ? "file" : found.isDirectory() ? "dir" : "other", size: found.size }
    // Nothing there (or unreadable): treated as absent, so it is written only where nothing stands.
  } catch {
    return { is: "none", size: 0 }
  }
}

/** Absent, recorded as ours, or a plain file holding exactly our text (an install killed before its manifest). */
async function oursOrAbsent(file: { path: string; text: string }, recorded: Set<string>): Promise<boolean> {
  const found = await kind(file.path)
  if (found.is === "none" || recorded.has(file.path)) return true
  if (found.is !== "file" || found.size !== Buffer.byteLength(file.text)) return false
  const text = await Bun.file(file.path)
    .text()
    // Unreadable is not ours: it is left alone.
    .catch(() => undefined)
  return text === file.text
}

/**
 * Whether to provision: only where each of package.json, package-lock.json and node_modules/ is absent
 * or ours (recorded, or exactly what we write). A dir OpenCode or the user set up is theirs, and a
 * symlink in any of those places is never written through.
 */
export async function shouldProvision(configDir: string, manifest: InstallManifest | undefined): Promise<boolean> {
  const recorded = new Set((manifest?.files ?? []).map((file) => file.path))
  const [pkg, lock, hidden] = pluginDependencyFiles(configDir)
  // A symlink (or anything but a directory) in node_modules' place would take our write elsewhere.
  const modules = (await kind(`${configDir}/node_modules`)).is
  if (modules !== "none" && modules !== "dir") return false
  // Once ours, always desired: the planner keeps, updates or preserves them like every managed file.
  if (recorded.has(pkg!.path)) return true
  if (!(await oursOrAbsent(pkg!, recorded)) || !(await oursOrAbsent(lock!, recorded))) return false
  if (modules === "none") return true
  // An unreadable node_modules counts as holding something of the user's: it is not provisioned.
  const names = await readdir(`${configDir}/node_modules`).catch(() => ["(unreadable)"])
  return names.every((name) => name === ".package-lock.json") && (await oursOrAbsent(hidden!, recorded))
}

/**
 * The config dirs to provision: OpenCode's XDG one (where our plugin lives) and `~/.opencode` when it
 * is a directory already (OpenCode waits on its install there too), each only where shouldProvision says.
 */
export async function provisionDirs(
  configDir: string,
  homes: Pick<ClientHomes, "home">,
  manifest: InstallManifest | undefined,
): Promise<string[]> {
  const dirs = [configDir]
  if ((await kind(opencodeHomeDir(homes))).is === "dir") dirs.push(opencodeHomeDir(homes))
  const chosen: string[] = []
  for (const dir of dirs) if (await shouldProvision(dir, manifest)) chosen.push(dir)
  return chosen
}
