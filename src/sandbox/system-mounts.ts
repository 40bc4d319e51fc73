// The part of the host every sandbox sees: /usr read-only with the merged-/usr symlinks (/bin, /lib*,
// /sbin) recreated as on the host, the dynamic loader's cache and Debian's alternatives links. Host
// networking adds exactly the resolver files and a CA trust source, and fails closed without them.
import { fail } from "../errors"
import type { FsView } from "./fs-view"
import { isInside } from "./host-paths"
import type { Mount } from "./mounts"

const MERGED_USR_LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"]

/** Harmless, and needed: ld.so's cache, and `/usr/bin/awk` → `/etc/alternatives/awk` style links. */
const SYSTEM_ETC = ["/etc/ld.so.cache", "/etc/alternatives"]

const RESOLVER_FILES = ["/etc/resolv.conf", "/etc/hosts"]
/** CA trust sources in preference order: the directory to mount and the bundle that must be in it. */
const CA_SOURCES = [
  { dir: "/etc/ssl/certs", bundle: "ca-certificates.crt" },
  { dir: "/etc/pki/tls/certs", bundle: "ca-bundle.crt" },
]

/** Binds `dest` from its canonical source (e.g. /etc/resolv.conf → /run/systemd/resolve/…). */
function canonicalBind(dest: string, kind: "file" | "dir", fs: FsView): Mount | undefined {
  const source = fs.realpath(dest)
  if (!source || fs.lstat(source) !== kind) return undefined
  return { op: "ro-bind", source, dest }
}

export function systemMounts(fs: FsView): Mount[] {
  const mounts: Mount[] = [{ op: "ro-bind", source: "/usr", dest: "/usr" }]
  for (const name of MERGED_USR_LINKS) {
    const path = `/${name}`
    const kind = fs.lstat(path)
    const real = kind === "symlink" ? fs.realpath(path) : undefined
    // Relative targets (usr/bin) resolve inside the sandbox root, never through bwrap's staging root.
    if (real && isInside(real, "/usr")) mounts.push({ op: "symlink", target: real.slice(1), dest: path })
    else if (kind === "dir") mounts.push({ op: "ro-bind", source: path, dest: path })
  }
  for (const path of SYSTEM_ETC) {
    const bind = canonicalBind(path, path.endsWith(".cache") ? "file" : "dir", fs)
    if (bind) mounts.push(bind)
  }
  return mounts
}

export function hostNetworkMounts(fs: FsView): Mount[] {
  const mounts: Mount[] = []
  for (const path of RESOLVER_FILES) {
    const bind = canonicalBind(path, "file", fs)
    if (!bind)
      throw fail(
        "Sandbox",
        `Host networking needs ${path}, which is missing or not a regular file.`,
        `Create ${path} on the host, or run the command with network_access "disabled".`,
        { path },
      )
    mounts.push(bind)
  }
  const ca = CA_SOURCES.find((source) => fs.realpath(`${source.dir}/${source.bundle}`) !== undefined)
  const bind = ca && canonicalBind(ca.dir, "dir", fs)
  if (!bind)
    throw fail(
      "Sandbox",
      "Host networking needs a CA trust source (/etc/ssl/certs/ca-certificates.crt), and none was found.",
      'Install the ca-certificates package, or run the command with network_access "disabled".',
    )
  mounts.push(bind)
  return mounts
}
