// What a delegation changed in the workspace, measured by git rather than taken from the model's
// word: the dirty files (tracked and untracked) with a content hash before the task and after it.
// A file already dirty before the task counts only if the task changed it again.
import { readdir, stat } from "node:fs/promises"
import { run } from "../util/process"

export interface Snapshot {
  git: boolean
  /** HEAD when the snapshot was taken; a task must not move it (it may not run git commands that change anything). */
  head?: string
  /** Path (relative to the workspace) → porcelain status and a content fingerprint. */
  entries: Record<string, { status: string; hash: string }>
}

export type ChangeKind = "added" | "modified" | "deleted" | "renamed"

export interface FileChange {
  path: string
  change: ChangeKind
}

/** Fingerprints larger files by size and mtime instead of reading them. */
const HASH_LIMIT = 8 * 1024 * 1024

async function git(workspace: string, args: string[]) {
  // --no-optional-locks: status must not take index.lock while a worker (or the user) uses the repo.
  return run(["git", "--no-optional-locks", "-C", workspace, ...args], { timeoutMs: 30_000, maxOutputBytes: 32 * 1024 * 1024 })
}

async function fingerprint(file: string): Promise<string> {
  const info = await stat(file).catch(() => undefined)
  if (!info) return "absent"
  if (!info.isFile()) return `other:${info.mtimeMs}`
  if (info.size > HASH_LIMIT) return `size:${info.size}:${info.mtimeMs}`
  // A file the task made unreadable (chmod 000) still counts as changed, rather than failing the task.
  return Bun.file(file)
    .bytes()
    .then((bytes) => Bun.hash(bytes).toString(16))
    .catch(() => `unreadable:${info.mtimeMs}`)
}

/** The workspace's git state; `git: false` (and no entries) outside a repository. */
export async function snapshot(workspace: string): Promise<Snapshot> {
  const prefix = await git(workspace, ["rev-parse", "--show-prefix"])
  if (prefix.code !== 0) return { git: false, entries: {} }
  const base = prefix.stdout.trim()
  const head = (await git(workspace, ["rev-parse", "--verify", "-q", "HEAD"])).stdout.trim() || undefined
  const status = await git(workspace, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", "."])
  const entries: Snapshot["entries"] = {}
  const fields = status.stdout.split("\0")
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!
    if (field.length < 4) continue
    const code = field.slice(0, 2)
    const full = field.slice(3)
    // A rename or copy is followed by its source path in the next field.
    if (code.includes("R") || code.includes("C")) i++
    if (!full.startsWith(base)) continue
    const path = full.slice(base.length)
    entries[path] = { status: code, hash: await fingerprint(`${workspace}/${path}`) }
  }
  return { git: true, head, entries }
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

/**
 * Every `.git` under the workspace other than its own top-level one, relative to it, with a
 * fingerprint of what would run from it (a `gitdir:` file's pointer; a directory's `config` and
 * `hooks/`). Git does not show these in `status` (it skips every `.git`), yet one a delegated writer
 * planted or changed brings hooks and config that run when the user next uses git there, outside
 * any sandbox.
 */
export async function nestedGitMetadata(workspace: string): Promise<Record<string, string>> {
  const found = await run(["find", workspace, "-path", `${workspace}/.git`, "-prune", "-o", "-name", ".git", "-print"], { timeoutMs: 30_000 })
  const entries: Record<string, string> = {}
  for (const path of found.stdout.split("\n").filter(Boolean).sort()) entries[path.slice(workspace.length + 1)] = await gitFingerprint(path)
  return entries
}

async function gitFingerprint(path: string): Promise<string> {
  const info = await stat(path).catch(() => undefined)
  if (!info?.isDirectory()) return `file:${await fingerprint(path)}`
  const hooks = await readdir(`${path}/hooks`).catch(() => [] as string[])
  const parts = [`config:${await fingerprint(`${path}/config`)}`]
  for (const hook of hooks.sort()) parts.push(`${hook}:${await fingerprint(`${path}/hooks/${hook}`)}`)
  return parts.join(" ")
}

/** Nested git metadata that is new or changed since `before`, each with what happened to it. */
export function gitMetadataChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.entries(after)
    .filter(([path, print]) => before[path] !== print)
    .map(([path]) => `${path} (${path in before ? "changed" : "new"})`)
}
