// What a delegation changed in the workspace, measured by git rather than taken from the model's
// word: the dirty files (tracked and untracked) with a content fingerprint before the task and after
// it. A file already dirty before the task counts only if the task changed it again. Git runs in the
// sandbox on the repository pinned by the first snapshot (git.ts), never on the host.
import { lstat, readlink } from "node:fs/promises"
import type { HostContext } from "../../sandbox"
import type { ChangeKind } from "./change-kind"
import { findRepository, sandboxedGit, type Repository } from "../git"

export interface Snapshot {
  git: boolean
  /** The repository measured; the after-snapshot uses the same one, whatever `.git` appeared since. */
  repository?: Repository
  /** HEAD when the snapshot was taken; a task must not move it (it may not run git commands that change anything). */
  head?: string
  /** Path (relative to the workspace) → porcelain status and a content fingerprint. */
  entries: Record<string, { status: string; hash: string }>
  /** When the snapshot began (ms since the epoch): what changed on disk after it is the turn's (disk-changes.ts). */
  since?: number
}

export interface FileChange {
  path: string
  change: ChangeKind
}

/** Fingerprints larger files by size and mtime instead of reading them. */
const HASH_LIMIT = 8 * 1024 * 1024

/**
 * What is at a path, without following a final symlink: a symlink is its target text, and only a
 * regular file is read (a FIFO a task left behind would block the reader).
 */
export async function fingerprint(file: string): Promise<string> {
  // Unreadable metadata (a parent made unsearchable) counts as absent: a change, never a failed task.
  const info = await lstat(file).catch(() => undefined)
  if (!info) return "absent"
  // A link gone between lstat and readlink still differs from any target it had.
  if (info.isSymbolicLink()) return `link:${await readlink(file).catch(() => "?")}`
  if (!info.isFile()) return `other:${info.mode}:${info.mtimeMs}`
  if (info.size > HASH_LIMIT) return `size:${info.size}:${info.mtimeMs}`
  // A file the task made unreadable (chmod 000) still counts as changed, rather than failing the task.
  return (
    Bun.file(file)
      .bytes()
      .then((bytes) => Bun.hash(bytes).toString(16))
      // As above: unreadable counts as changed.
      .catch(() => `unreadable:${info.mtimeMs}`)
  )
}

/** `git status --porcelain=v2 -z --branch` → HEAD and path → XY code (renames keep their new path). */
function parseStatus(output: string): { head?: string; entries: Record<string, string> } {
  const fields = output.split("\0")
  const entries: Record<string, string> = {}
  let head: string | undefined
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!
    if (field.startsWith("# branch.oid ")) {
      const oid = field.slice("# branch.oid ".length)
      head = oid === "(initial)" ? undefined : oid
    } else if (field.startsWith("1 ")) entries[field.split(" ").slice(8).join(" ")] = field.slice(2, 4)
    else if (field.startsWith("2 ")) {
      entries[field.split(" ").slice(9).join(" ")] = field.slice(2, 4)
      i++ // the rename's source path follows in its own field
    } else if (field.startsWith("u ")) entries[field.split(" ").slice(10).join(" ")] = field.slice(2, 4)
    else if (field.startsWith("? ")) entries[field.slice(2)] = "??"
  }
  return { head, entries }
}

/**
 * The workspace's git state; `git: false` (and no entries) outside a repository. `pinned` is the
 * before-snapshot's repository: the after-snapshot must not be redirected by a `.git` the task planted.
 */
export async function snapshot(workspace: string, host: HostContext, pinned?: Repository): Promise<Snapshot> {
  const since = Date.now()
  const repository = pinned ?? findRepository(workspace, host)
  if (!repository) return { git: false, entries: {}, since }
  const status = await sandboxedGit(
    repository,
    host,
    ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--", "."],
    { cwd: workspace },
  )
  if (status?.code !== 0) return { git: false, entries: {}, since }
  const base = workspace === repository.root ? "" : `${workspace.slice(repository.root.length + 1)}/`
  const parsed = parseStatus(status.stdout)
  const entries: Snapshot["entries"] = {}
  for (const [full, code] of Object.entries(parsed.entries)) {
    if (!full.startsWith(base)) continue
    const path = full.slice(base.length)
    entries[path] = { status: code, hash: await fingerprint(`${workspace}/${path}`) }
  }
  return { git: true, repository, head: parsed.head, entries, since }
}

function kindOf(status: string | undefined): ChangeKind {
  if (!status) return "modified"
  if (status === "??" || status.includes("A")) return "added"
  if (status.includes("D")) return "deleted"
  if (status.includes("R")) return "renamed"
  return "modified"
}

/** Files whose state differs between two snapshots, sorted by path. A file restored to HEAD counts as modified. */
export function changedFiles(before: Snapshot, after: Snapshot): FileChange[] {
  const paths = new Set([...Object.keys(before.entries), ...Object.keys(after.entries)])
  const changes: FileChange[] = []
  for (const path of paths) {
    const was = before.entries[path]
    const now = after.entries[path]
    if (was && now && was.hash === now.hash && was.status === now.status) continue
    changes.push({ path, change: now ? kindOf(now.status) : "modified" })
  }
  return changes.sort((a, b) => a.path.localeCompare(b.path))
}
