// The few filesystem questions the sandbox planner asks, behind an interface so the planner stays a
// function of its inputs (tests can hand in a fake tree) and the host implementation is one small file.
import { lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs"

export type EntryKind = "file" | "dir" | "symlink" | "other"

export interface FsView {
  /** What is at this path without following a final symlink; undefined when nothing is. */
  lstat(path: string): EntryKind | undefined
  /** The canonical path (every symlink resolved), or undefined when it does not resolve. */
  realpath(path: string): string | undefined
  /** A small text file's content (gitdir pointers), or undefined. */
  readText(path: string): string | undefined
  /** The names in a directory (not following a final symlink), or undefined when it is not one. */
  list(path: string): string[] | undefined
}

/** Git pointer files are one line; anything large is not one, and we refuse to read it whole. */
const MAX_TEXT_BYTES = 64 * 1024

export const hostFs: FsView = {
  lstat(path) {
    try {
      const stat = lstatSync(path, { throwIfNoEntry: false })
      if (!stat) return undefined
      if (stat.isSymbolicLink()) return "symlink"
      if (stat.isDirectory()) return "dir"
      if (stat.isFile()) return "file"
      return "other"
    } catch {
      // EACCES or ENOTDIR on a component: treat as absent; callers refuse what they cannot see.
      return undefined
    }
  },
  realpath(path) {
    try {
      return realpathSync.native(path)
    } catch {
      return undefined
    }
  },
  list(path) {
    if (hostFs.lstat(path) !== "dir") return undefined
    try {
      return readdirSync(path)
    } catch {
      return undefined
    }
  },
  readText(path) {
    // Only regular files: a FIFO would block the reader until someone writes to it.
    if (hostFs.lstat(path) !== "file") return undefined
    try {
      const data = readFileSync(path)
      return data.byteLength > MAX_TEXT_BYTES ? undefined : data.toString("utf8")
    } catch {
      return undefined
    }
  },
}
