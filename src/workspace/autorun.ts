// Files that other programs run without asking: Git metadata below the workspace (hooks, config with
// fsmonitor), OpenCode project config and plugins, Claude Code and Codex project settings, MCP server
// lists, direnv, editor tasks, CI workflows, commit hooks. A delegated writer may not create or change
// them: the host-side file tools refuse them by name, and whatever the sandbox shell did to them is
// found here (by name, with `find`, so no repository program runs) and ends the task needs_review.
import { readdir } from "node:fs/promises"
import { AUTORUN_DIRS, AUTORUN_FILES, AUTORUN_PATHS } from "../sandbox"
import { run } from "../util/process"
import { fingerprint } from "./changes"

/** Entries read of one directory's fingerprint: enough to see a planted file, bounded for a huge tree. */
const DIR_ENTRIES = 2000

/**
 * Every autorun entry under the workspace, relative to it, with a fingerprint of what would run. The
 * workspace's own `.git` counts too: the sandbox mounts it read-only when it exists, but a worker in a
 * directory without one can create it.
 */
export async function autorunFiles(workspace: string): Promise<Record<string, string>> {
  const names = (list: string[], flag: string) => list.flatMap((name, index) => [...(index ? ["-o"] : []), flag, name])
  const found = await run(
    [
      "find",
      workspace,
      "-mindepth",
      "1",
      "(",
      ...names(AUTORUN_DIRS, "-name"),
      ")",
      "-print",
      "-prune",
      "-o",
      "(",
      ...names(AUTORUN_FILES, "-name"),
      "-o",
      ...names(
        AUTORUN_PATHS.map((path) => `*/${path}`),
        "-path",
      ),
      ")",
      "-print",
      "-prune",
    ],
    { timeoutMs: 30_000 },
  )
  const entries: Record<string, string> = {}
  for (const path of found.stdout.split("\n").filter(Boolean).sort()) entries[path.slice(workspace.length + 1)] = await treeFingerprint(path)
  return entries
}

async function treeFingerprint(path: string): Promise<string> {
  const own = await fingerprint(path)
  if (!own.startsWith("other:")) return own
  // A Git directory's objects are data; its config and hooks are what runs.
  const inside = path.endsWith("/.git") ? ["config", ...(await readdir(`${path}/hooks`).catch(() => [] as string[])).map((hook) => `hooks/${hook}`)] : await listTree(path)
  const parts: string[] = []
  for (const entry of inside.sort()) parts.push(`${entry}:${await fingerprint(`${path}/${entry}`)}`)
  return parts.join(" ")
}

async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[])
  return entries.slice(0, DIR_ENTRIES)
}

/** Autorun entries that are new, changed or gone since `before`, each with what happened to it. */
export function autorunChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  const paths = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
  return paths.filter((path) => before[path] !== after[path]).map((path) => `${path} (${!(path in before) ? "new" : path in after ? "changed" : "removed"})`)
}

export const autorunWarning = (changed: string[]) =>
  `Files that other programs run on their own appeared or changed in the workspace: ${changed.join(", ")}. Git hooks and config, OpenCode plugins and config, client settings, CI workflows and the like run outside any sandbox; inspect them (and delete what the task planted) before using git, OpenCode or your editor there.`
