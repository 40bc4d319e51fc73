// A workspace's uncommitted work, as a reviewer is told it (review's cwd form): the dirty files as git
// status lists them (the snapshot files_changed is measured by) and a bounded diff against HEAD of the
// staged, unstaged and untracked files. Git runs as on any workspace (git.ts): in the read-only sandbox,
// the repository's programs switched off, and no textconv or external diff.
import { lstat } from "node:fs/promises"
import type { HostContext } from "../../sandbox"
import { changedFiles, snapshot, type FileChange } from "./changes"
import { sandboxedGit } from "../git"

export interface Uncommitted {
  /** False outside a repository (or one git could not read in the sandbox). */
  git: boolean
  files: FileChange[]
  /** The unified diff, cut to the bound at a line's end. */
  diff: string
  /** The diff was cut or git could not make all of it: the reviewer reads the rest in the tree. */
  cut: boolean
}

const DIFF = ["diff", "--no-color", "--no-ext-diff", "--no-textconv"]

/** New files diffed at most; the rest are listed only. */
const NEW_FILES = 200

/** `parts` joined and cut to `maxBytes` at the end of a line; `cut` when anything was left out. Pure. */
export function boundDiff(parts: string[], maxBytes: number, cut = false): { diff: string; cut: boolean } {
  const whole = Buffer.from(parts.filter(Boolean).join(""))
  if (whole.length <= maxBytes && !cut) return { diff: whole.toString(), cut: false }
  const head = whole.subarray(0, Math.min(whole.length, maxBytes))
  const end = head.lastIndexOf(10)
  return { diff: head.subarray(0, end + 1).toString(), cut: true }
}

/** The workspace's changes against HEAD (every file new without one), the diff at most `maxBytes`. */
export async function uncommitted(workspace: string, host: HostContext, maxBytes: number): Promise<Uncommitted> {
  const state = await snapshot(workspace, host)
  const repository = state.repository
  if (!state.git || !repository) return { git: false, files: [], diff: "", cut: false }
  const files = changedFiles({ git: true, entries: {} }, state)
  if (!files.length) return { git: true, files, diff: "", cut: false }
  let cut = false
  let size = 0
  const parts: string[] = []
  const git = async (args: string[]) => {
    const out = await sandboxedGit(repository, host, args, { cwd: workspace, maxOutputBytes: maxBytes + 1 })
    // Cut, or not made at all (a file git cannot hash, a FIFO in a tracked file's place): the reviewer is
    // told the diff is incomplete. `diff --no-index` exits 1 when the files differ.
    if (!out || out.truncated || (out.code !== 0 && out.code !== 1)) cut = true
    parts.push(out?.stdout ?? "")
    size += Buffer.byteLength(out?.stdout ?? "")
  }
  if (state.head) await git([...DIFF, "--relative", "HEAD", "--", "."])
  // Untracked files are not in git's diff against HEAD: each is shown as new, from /dev/null.
  const fresh = files.filter((file) => !state.head || state.entries[file.path]?.status === "??")
  for (const file of fresh.slice(0, NEW_FILES)) {
    if (size > maxBytes) break
    // Only a regular file is read: git would wait on a FIFO, and a symlink is listed, not followed.
    const info = await lstat(`${workspace}/${file.path}`).catch(() => undefined)
    if (info?.isFile()) await git([...DIFF, "--no-index", "--", "/dev/null", file.path])
  }
  if (fresh.length > NEW_FILES) cut = true
  return { git: true, files, ...boundDiff(parts, maxBytes, cut) }
}
