// A scoped worker's writable paths: its scope entries (src/workspace/scope.ts; globs as src/util/glob.ts
// reads them) expanded against what exists in the workspace, for the planner to bind writable over a
// read-only workspace. An entry naming a directory, or ending in `/**`, binds that directory (new files
// may appear under it); one naming a file binds the file; wildcards bind each existing match (a new
// matching file cannot be created). The workspace is the agent's: a path is bound only when every
// component below the workspace is a real directory, it is canonical, and it is not Git metadata. Its
// identity is taken before those checks, so a swap after them shows inside the sandbox as a changed mount
// (the plan's pins) and nothing runs; a path that was a symlink when its identity was read (a swap just
// before them) stays read-only.
//
// One more bind serves the write tool creating a file its scope names but no existing path covers (a new
// `test/b.test.ts` under `test/*.test.ts`, a file in a scoped directory not made yet): the deepest
// existing directory on the new file's way, for that one command of ours (a fixed script that makes the
// missing directories and creates the file exclusively), never for the agent's shell. The agent cannot
// change that directory's entries meanwhile: it lies outside every bind its own commands get.
import { globsMatcher, isWildcard, segmentMatcher } from "../util/glob"
import type { FsView } from "./fs-view"

/** bwrap arguments and pin stats grow with each bind; past this the rest stay read-only, said so. */
export const MAX_SCOPE_BINDS = 200
/** Directories a `**` before the last segment may visit while expanding. */
const MAX_WALK = 5000

export interface ScopeBinds {
  /** Canonical absolute paths to bind writable, none inside another; `id` taken before the checks. */
  binds: { path: string; id?: string }[]
  /** Workspace-relative paths (or entries) left read-only, each with why; empty when all bound. */
  readOnly: string[]
}

interface Walk {
  workspace: string
  fs: FsView
  found: Set<string>
  readOnly: string[]
  visited: number
}

const join = (dir: string, name: string) => (dir ? `${dir}/${name}` : name)

/** The names under a workspace-relative directory that is a real directory (not a symlink), else none. */
function children(walk: Walk, rel: string): string[] {
  const abs = rel ? `${walk.workspace}/${rel}` : walk.workspace
  if (walk.fs.lstat(abs) !== "dir") return []
  return (walk.fs.list(abs) ?? []).sort()
}

function expand(walk: Walk, segments: readonly string[], index: number, rel: string, entry: string): void {
  const segment = segments[index]!
  const last = index === segments.length - 1
  if (segment === "**") {
    if (last) return void walk.found.add(rel)
    // Any depth, this one included: every real directory below, never through a symlink or into .git.
    const queue = [rel]
    while (queue.length) {
      const dir = queue.shift()!
      if (++walk.visited > MAX_WALK) {
        walk.readOnly.push(`${entry} (more than ${MAX_WALK} directories to search)`)
        return
      }
      expand(walk, segments, index + 1, dir, entry)
      for (const name of children(walk, dir))
        if (name !== ".git" && walk.fs.lstat(`${walk.workspace}/${join(dir, name)}`) === "dir")
          queue.push(join(dir, name))
    }
    return
  }
  // A wildcard never reaches .git (only an entry naming it does, to be refused below).
  const matches = segmentMatcher(segment)
  const names = isWildcard(segment) ? children(walk, rel).filter((name) => name !== ".git" && matches(name)) : [segment]
  for (const name of names) {
    const next = join(rel, name)
    if (last) walk.found.add(next)
    else if (walk.fs.lstat(`${walk.workspace}/${next}`) === "dir") expand(walk, segments, index + 1, next, entry)
    else if (!isWildcard(segment)) missing(walk, next)
  }
}

function missing(walk: Walk, rel: string): void {
  const kind = walk.fs.lstat(`${walk.workspace}/${rel}`)
  if (kind === undefined) walk.readOnly.push(`${rel} (does not exist yet; create it with the write tool)`)
  else walk.readOnly.push(`${rel} (${kind === "symlink" ? "a symlink" : "not a directory"})`)
}

/** Why a workspace-relative path cannot be bound writable, or undefined when it can. */
function unsafe(workspace: string, rel: string, fs: FsView): string | undefined {
  if (rel === ".git" || rel.startsWith(".git/")) return "Git metadata"
  const parts = rel ? rel.split("/") : []
  for (let at = 1; at <= parts.length; at++) {
    const kind = fs.lstat(`${workspace}/${parts.slice(0, at).join("/")}`)
    if (kind === "symlink") return "a symlink"
    if (kind === undefined) return "does not exist yet; create it with the write tool"
    if (at < parts.length && kind !== "dir") return "not under a directory"
    if (at === parts.length && kind !== "dir" && kind !== "file") return "a special file"
  }
  const abs = rel ? `${workspace}/${rel}` : workspace
  if (fs.realpath(abs) !== abs) return "not a canonical path"
  return undefined
}

/**
 * Why a path that passed its checks still cannot be bound: its identity, taken before them, was of a
 * symlink or of nothing. A process that swapped the path for a link just before the identity and back
 * before the checks would otherwise have the link's inode pinned, and a sandbox that mounted the link's
 * target while the link was back in place would pass its pin check.
 */
function swapped(fs: FsView, id: string | undefined): string | undefined {
  return fs.identity && id === undefined ? "changed while it was checked" : undefined
}

export interface ScopeBindOptions {
  /** A file the write tool is about to create (workspace-relative): see the header. */
  creating?: string
}

const parentOf = (rel: string) => (rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "")
const covers = (dir: string, rel: string) => dir === "" || rel === dir || rel.startsWith(`${dir}/`)

/**
 * The directory to bind so `creating` can be made (the deepest existing one on its way), or undefined:
 * only when the scope names it, nothing at it exists yet and no bind covers it.
 */
function creationDir(
  workspace: string,
  scope: readonly string[],
  creating: string,
  bound: readonly string[],
  fs: FsView,
): string | undefined {
  const parts = creating.split("/")
  if (parts.some((part) => part === "" || part === "." || part === ".." || part.toLowerCase() === ".git"))
    return undefined
  if (!globsMatcher(scope)(creating) || bound.some((dir) => covers(dir, creating))) return undefined
  if (fs.lstat(`${workspace}/${creating}`) !== undefined) return undefined
  let dir = parentOf(creating)
  while (dir && fs.lstat(`${workspace}/${dir}`) === undefined) dir = parentOf(dir)
  return dir
}

/** The scope's existing paths to bind writable in `workspace` (canonical), and what stays read-only. */
export function scopeBinds(
  workspace: string,
  scope: readonly string[],
  fs: FsView,
  options: ScopeBindOptions = {},
): ScopeBinds {
  const walk: Walk = { workspace, fs, found: new Set(), readOnly: [], visited: 0 }
  for (const entry of scope) {
    const segments = entry.replace(/\/$/, "").split("/")
    expand(walk, segments, 0, "", entry)
  }
  // Shortest first, so a path under one already bound is dropped (the directory's bind covers it).
  const paths = [...walk.found].sort((a, b) => a.length - b.length || (a < b ? -1 : 1))
  const binds: ScopeBinds["binds"] = []
  const bound: string[] = []
  for (const rel of paths) {
    if (bound.some((dir) => dir === "" || rel === dir || rel.startsWith(`${dir}/`))) continue
    const abs = rel ? `${workspace}/${rel}` : workspace
    const id = fs.identity?.(abs)
    const why = unsafe(workspace, rel, fs) ?? swapped(fs, id)
    if (why) {
      walk.readOnly.push(`${rel || "."} (${why})`)
      continue
    }
    if (binds.length >= MAX_SCOPE_BINDS) {
      walk.readOnly.push(`${rel} (over ${MAX_SCOPE_BINDS} paths)`)
      continue
    }
    binds.push(id === undefined ? { path: abs } : { path: abs, id })
    bound.push(rel)
  }
  const dir = options.creating === undefined ? undefined : creationDir(workspace, scope, options.creating, bound, fs)
  const abs = dir ? `${workspace}/${dir}` : workspace
  // As for every bind: its identity before its checks.
  const id = dir === undefined ? undefined : fs.identity?.(abs)
  if (dir === undefined || (unsafe(workspace, dir, fs) ?? swapped(fs, id)) !== undefined || fs.lstat(abs) !== "dir")
    return { binds, readOnly: [...new Set(walk.readOnly)] }
  // The directory's bind covers the paths bound under it: none inside another.
  const kept = binds.filter((bind) => !covers(dir, bind.path.slice(workspace.length + 1)))
  kept.push(id === undefined ? { path: abs } : { path: abs, id })
  return { binds: kept, readOnly: [...new Set(walk.readOnly)] }
}
