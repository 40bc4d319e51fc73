// Directories that group far more than one project or toolchain: system roots, the parents of every
// user's home, shared scratch space. The sandbox refuses to mount one whole (sandbox/host-paths.ts); the
// policy-marker walk stops below one (policy/markers.ts), since a marker there is no project's statement.
// A leaf both depend on, so that neither folder imports the other.

/** Broad roots: a mount equal to one of these (or `/`) exposes far more than a toolchain or a project. */
export const BROAD_ROOTS: readonly string[] = [
  "/",
  "/usr",
  "/etc",
  "/var",
  "/var/tmp",
  "/tmp",
  "/home",
  "/root",
  "/opt",
  "/srv",
  "/mnt",
  "/media",
  "/run",
  "/boot",
  "/proc",
  "/sys",
  "/dev",
  "/bin",
  "/sbin",
  "/lib",
  "/lib64",
  "/usr/local",
  "/var/lib",
]
