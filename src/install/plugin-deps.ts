// What OpenCode would fetch the first time it loads our plugin, provisioned so that start needs no
// network. OpenCode 1.18.33 (its Npm.install) runs `npm install @opencode-ai/plugin@<its version>` in
// every config dir it reads and, when that dir has plugins, waits for it before loading them: ~70 s of
// registry retries on a machine without network, then the plugin loads anyway. It skips the install
// when node_modules/ exists and package-lock.json's root lists every dependency of package.json plus
// @opencode-ai/plugin (names only; versions and node_modules' contents are not checked). Our plugin is
// one bundled file with no imports, so it needs none of the package: the install writes the files
// OpenCode's own install leaves at the root, and a later `npm install` in that dir completes them.
import { stat } from "node:fs/promises"
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

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  )

/**
 * Whether to provision: in a config dir where no package.json or node_modules is there yet, or where
 * they are the ones an earlier install recorded. A dir OpenCode (or the user) already set up is theirs.
 */
export async function shouldProvision(configDir: string, manifest: InstallManifest | undefined): Promise<boolean> {
  const recorded = new Set((manifest?.files ?? []).map((file) => file.path))
  if (recorded.has(`${configDir}/package.json`)) return true
  return !(await exists(`${configDir}/package.json`)) && !(await exists(`${configDir}/node_modules`))
}
