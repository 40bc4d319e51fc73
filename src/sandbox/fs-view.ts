// The few filesystem questions the sandbox planner asks, behind an interface so the planner stays a
// function of its inputs (tests can hand in a fake tree) and the host implementation is one small file.
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync } from "node:fs"

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
  /**
   * `device:inode` of what is at this path, read in one lstat; undefined when nothing is there or it is a
   * symlink (a path the planner checks is never one: seeing one means it was swapped). Absent in fake trees.
   */
  identity?(path: string): string | undefined
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
      // Gone or unreadable: undefined, which every rule reads as not there.
      return undefined
    }
  },
  identity(path) {
    try {
      const stat = lstatSync(path, { bigint: true, throwIfNoEntry: false })
      return stat && !stat.isSymbolicLink() ? `${stat.dev}:${stat.ino}` : undefined
    } catch {
      // As above.
      return undefined
    }
  },
  list(path) {
    if (hostFs.lstat(path) !== "dir") return undefined
    try {
      return readdirSync(path)
    } catch {
      // As above.
      return undefined
    }
  },
  readText(path) {
    // Opened without following a final link and without blocking, then checked on the open file: a
    // FIFO (or a link to one) swapped in after an lstat would otherwise block this whole process.
    let fd: number | undefined
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
      const stat = fstatSync(fd)
      if (!stat.isFile() || stat.size > MAX_TEXT_BYTES) return undefined
      const data = Buffer.alloc(MAX_TEXT_BYTES + 1)
      let length = 0
      for (let read = -1; read !== 0 && length < data.length; length += read)
        read = readSync(fd, data, length, data.length - length, null)
      return length > MAX_TEXT_BYTES ? undefined : data.subarray(0, length).toString("utf8")
    } catch {
      // As above.
      return undefined
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  },
}
