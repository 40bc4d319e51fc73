// The sandbox's filesystem as an ordered list of mount operations, and the host-side check that runs
// before bwrap: every component of every destination is looked up (lstat) on the host through the
// mount that provides it. bubblewrap < 0.12 follows a symlink in a destination's parent, through its
// /oldroot staging view, and creates files on the host before the command starts (GHSA-pxhw-h44j-8pfx).
// Refusing any symlink or missing component on the host side closes that whatever bwrap version runs.
import { fail } from "../errors"
import type { FsView } from "./fs-view"
import { isInside } from "./host-paths"

export type Mount =
  | { op: "ro-bind" | "bind"; source: string; dest: string }
  /**
   * `source` seen at `dest` with every write going to a tmpfs that vanishes with the sandbox (bwrap's
   * --overlay-src/--tmp-overlay): the product's verification restores files there, never on the host.
   */
  | { op: "tmp-overlay"; source: string; dest: string }
  | { op: "tmpfs"; dest: string /** bytes; bwrap's --size */; size?: number }
  | { op: "dir" | "proc" | "dev" | "remount-ro"; dest: string }
  | { op: "symlink"; target: string; dest: string }

/** Destinations are absolute and already normal: no empty, `.` or `..` component to reinterpret. */
function isNormalAbsolute(path: string): boolean {
  if (path === "/") return true
  if (!path.startsWith("/") || path.endsWith("/")) return false
  return path
    .slice(1)
    .split("/")
    .every((part) => part !== "" && part !== "." && part !== "..")
}

/** The prefixes of a path, shortest first: /a/b/c → /a, /a/b, /a/b/c. */
export function prefixes(path: string): string[] {
  const parts = path.split("/").filter(Boolean)
  return parts.map((_, index) => `/${parts.slice(0, index + 1).join("/")}`)
}

/** Of the mounts before index, the one that provides `path` in the sandbox (the latest deepest covering one). */
function provider(mounts: readonly Mount[], index: number, path: string): Mount | undefined {
  let best: Mount | undefined
  for (const mount of mounts.slice(0, index)) {
    if (mount.op === "remount-ro" || !isInside(path, mount.dest)) continue
    if (!best || mount.dest.length >= best.dest.length) best = mount
  }
  return best
}

function refuse(mount: Mount, why: string): never {
  throw fail(
    "Sandbox",
    `Refusing to mount ${mount.dest}: ${why}.`,
    "Remove the symlink (or create the missing directory) on the host, or choose another workspace; symlinked " +
      "mount paths can redirect a mount out of the sandbox.",
    { mount },
  )
}

/** Throws a Sandbox error for the first mount that could be redirected on the host; returns when all are safe. */
export function checkMounts(mounts: readonly Mount[], fs: FsView): void {
  mounts.forEach((mount, index) => {
    if (!isNormalAbsolute(mount.dest)) refuse(mount, "the destination is not a normal absolute path")
    if (mount.op === "bind" || mount.op === "ro-bind" || mount.op === "tmp-overlay") {
      if (!isNormalAbsolute(mount.source)) refuse(mount, `the source ${mount.source} is not a normal absolute path`)
      // realpath equal to itself means no component of the source is a symlink.
      if (fs.realpath(mount.source) !== mount.source)
        refuse(mount, `the source ${mount.source} is not a canonical path`)
      for (const prefix of prefixes(mount.source))
        if (fs.lstat(prefix) === "symlink") refuse(mount, `${prefix} (in the source) is a symlink`)
    }
    if (mount.op === "remount-ro") return
    for (const prefix of prefixes(mount.dest)) {
      const from = provider(mounts, index, prefix)
      if (!from) continue // bwrap's own fresh root tmpfs: nothing there comes from the host
      if (from.op === "symlink") refuse(mount, `${prefix} is a symlink in the sandbox`)
      if (from.op === "proc" || from.op === "dev") refuse(mount, `${prefix} is inside ${from.dest}`)
      // a fresh tmpfs or directory we created
      if (from.op !== "bind" && from.op !== "ro-bind" && from.op !== "tmp-overlay") continue
      const host = from.source + prefix.slice(from.dest.length)
      const kind = fs.lstat(host)
      if (kind === "symlink") refuse(mount, `${host} on the host is a symlink`)
      // A missing component under a host bind would be created on the host by bwrap (mkdir or creat).
      if (kind === undefined) refuse(mount, `${host} does not exist on the host`)
      if (prefix !== mount.dest && kind !== "dir") refuse(mount, `${host} on the host is not a directory`)
    }
  })
}
