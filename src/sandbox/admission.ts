// Whether a directory may be a workspace at all: one decision, made before any record, lock or
// session (by the MCP tools and the engine) and again by the plugin on every sandboxed call. The path
// rules are the sandbox's own (host-paths.ts: no HOME or ancestor, no credential or tool-state store,
// no system root, no Git metadata, a `.git` pointer only along git's own links); on top come the user's optional
// allow-list and the project
// config that the shared OpenCode server would run on the host.
import { fail } from "../errors"
import type { FsView } from "./fs-view"
import { gitMetadataPaths } from "./git-metadata"
import { canonicalDir, isInside, pathRules } from "./host-paths"
import type { HostContext } from "./plan"

export interface AdmissionPolicy {
  /** config.json `workspaceRoots`: when non-empty, a workspace must lie inside one of them. */
  workspaceRoots: readonly string[]
  /** config.json `trustedProjectConfig`: directories whose project plugins the user accepts running on the host. */
  trustedProjectConfig: readonly string[]
}

export const OPEN_POLICY: AdmissionPolicy = { workspaceRoots: [], trustedProjectConfig: [] }

/** Where OpenCode looks for a project's plugin code in each directory it walks through. */
const PLUGIN_DIRS = [".opencode/plugin", ".opencode/plugins"]
/** Project config files whose `plugin` list OpenCode imports even with project config disabled. */
const CONFIG_FILES = ["opencode.json", "opencode.jsonc", ".opencode/opencode.json", ".opencode/opencode.jsonc"]

/**
 * Files under `dir` and its ancestors that OpenCode would import as plugins when a session starts in
 * `dir`: OpenCode (1.18) walks up to the filesystem root for `.opencode/` and `opencode.json(c)`, and
 * imports plugin files even with OPENCODE_DISABLE_PROJECT_CONFIG=1, so their top-level code runs on
 * the host. Global config dirs (ours included) are not on this walk.
 */
export function projectPluginSources(dir: string, fs: FsView): string[] {
  const found: string[] = []
  for (let current = dir; ; current = current.slice(0, current.lastIndexOf("/")) || "/") {
    const base = current === "/" ? "" : current
    for (const rel of PLUGIN_DIRS) {
      const entries = fs.list(`${base}/${rel}`)
      if (entries?.length) found.push(...entries.sort().map((name) => `${base}/${rel}/${name}`))
      else if (fs.lstat(`${base}/${rel}`) === "symlink") found.push(`${base}/${rel}`)
    }
    for (const rel of CONFIG_FILES) {
      const path = `${base}/${rel}`
      const kind = fs.lstat(path)
      if (kind === undefined) continue
      // A config we cannot read as a small regular file might hold anything: count it.
      const text = fs.readText(path)
      if (text === undefined || /["']?plugins?["']?\s*:/.test(text)) found.push(path)
    }
    if (current === "/") return found
  }
}

function refuse(message: string, hint: string, data: Record<string, unknown>): never {
  throw fail("Sandbox", message, hint, data)
}

/**
 * The canonical workspace for `cwd`, or a Sandbox error naming the rule that refused it and the fix.
 * Pure apart from the FsView it is handed.
 */
export function admitWorkspace(cwd: string, host: HostContext, policy: AdmissionPolicy, fs: FsView): string {
  const rules = pathRules(host.home, host.credentials, fs, host.worktrees)
  const workspace = canonicalDir(cwd, "workspace", rules, fs)
  if (policy.workspaceRoots.length) {
    const roots = policy.workspaceRoots.map((root) => fs.realpath(root) ?? root)
    if (!roots.some((root) => isInside(workspace, root)))
      refuse(
        `Refusing workspace ${cwd}${workspace === cwd ? "" : ` (resolves to ${workspace})`}: it is outside every ` +
          `workspaceRoots entry (${roots.join(", ")}).`,
        "Pass a cwd inside one of them, or add its parent to workspaceRoots in config.json.",
        { cwd, workspace, roots },
      )
  }
  // Git metadata the sandbox would mount is admitted here too, by git's two-way links (git-metadata.ts),
  // so a planted `gitdir:` pointer is refused before any record, lock or session, not at the first tool.
  gitMetadataPaths(workspace, rules, fs)
  const trusted = policy.trustedProjectConfig.map((root) => fs.realpath(root) ?? root)
  const plugins = projectPluginSources(workspace, fs).filter((file) => !trusted.some((root) => isInside(file, root)))
  if (plugins.length)
    refuse(
      `Refusing workspace ${workspace}: OpenCode would run project plugin code from ` +
        `${plugins.slice(0, 3).join(", ")}${plugins.length > 3 ? ` and ${plugins.length - 3} more` : ""} on the ` +
        `host when a session starts there.`,
      `Remove those files if you did not put them there (a delegated agent or a cloned repository may have); to ` +
        `run them deliberately, add the directory holding them to trustedProjectConfig in config.json.`,
      { workspace, plugins },
    )
  return workspace
}
