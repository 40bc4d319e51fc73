// An isolated worktree's layout (`tree/` the worker edits, `git/` the private repository beside it)
// and git on that private repository, always in a writable sandbox over the worktree's directory and
// with settings that keep content byte for byte.
import { fail } from "../../errors"
import type { HostContext } from "../../sandbox"
import { gitInSandbox, type GitOptions } from "./git"

/** Settings of every git call on a private repository (on top of git.ts's program-free ones). */
const PRIVATE_GIT = [
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.safecrlf=false",
  "-c",
  "core.symlinks=true",
  "-c",
  "core.fileMode=true",
  "-c",
  "core.ignoreCase=false",
  "-c",
  "core.quotePath=true",
]

export interface WorktreeLayout {
  /** `<worktrees>/<id>`: the sandbox workspace of the engine's own git calls. */
  dir: string
  /** `<dir>/tree`: the worker's workspace. */
  tree: string
  /** `<dir>/git`: the private Git directory; the worker's sandbox never mounts it. */
  gitDir: string
}

export const layoutOf = (worktreesDir: string, id: string): WorktreeLayout => ({
  dir: `${worktreesDir}/${id}`,
  tree: `${worktreesDir}/${id}/tree`,
  gitDir: `${worktreesDir}/${id}/git`,
})

/**
 * git on a worktree's private repository, in a writable sandbox over its directory; fails with `what` when git does.
 */
export async function privateGit(
  layout: WorktreeLayout,
  host: HostContext,
  args: string[],
  what: string,
  options: GitOptions = {},
): Promise<string> {
  const result = await gitInSandbox(
    { workspace: layout.dir, gitDir: layout.gitDir, workTree: layout.tree, writable: true },
    host,
    [...PRIVATE_GIT, ...args],
    {
      cwd: layout.tree,
      ...options,
      env: { GIT_INDEX_FILE: `${layout.gitDir}/index`, ...options.env },
    },
  )
  if (result?.code !== 0) {
    const why = result
      ? result.stderr.trim().slice(0, 400) || `git exited ${result.code}`
      : "git could not run in the sandbox"
    throw fail(
      "Server",
      `Could not ${what} in the isolated worktree ${layout.dir}: ${why}.`,
      'Run `opencode-mcp-orchestrator doctor`; retry with isolation "in_place" if it persists.',
    )
  }
  return result.stdout
}
