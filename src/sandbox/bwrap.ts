// What we know about the bwrap binary, as pure functions: its version (and whether that version is
// safe), and what its typical setup failures mean for the person who has to fix the host.

/** GHSA-pxhw-h44j-8pfx (symlink-parent mount escape) is fixed in 0.12.0. */
export const MIN_SAFE_VERSION = "0.12.0"

/** What a user of a release (who has no source checkout and no scripts/) does about a missing or old bwrap. */
export const BWRAP_FIX =
  "Install bubblewrap >= 0.12.0 as /usr/bin/bwrap: your distribution's package if it is that new (Debian 13's " +
  "trixie-security has it), else build the release from https://github.com/containers/bubblewrap/releases; then " +
  "run `opencode-mcp-orchestrator doctor`."

/** `bubblewrap 0.12.0` → [0, 12, 0]; undefined for anything else. */
export function parseBwrapVersion(output: string): [number, number, number] | undefined {
  const match = /^bubblewrap (\d+)\.(\d+)(?:\.(\d+))?\b/m.exec(output.trim())
  if (!match) return undefined
  return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)]
}

export function isSafeVersion(version: readonly [number, number, number] | undefined): boolean {
  if (!version) return false
  const min = MIN_SAFE_VERSION.split(".").map(Number)
  for (let i = 0; i < 3; i++) {
    const have = version[i] ?? 0
    const need = min[i] ?? 0
    if (have !== need) return have > need
  }
  return true
}

export type BwrapFailureCode =
  | "namespaces-denied"
  | "userns-restricted"
  | "proc-unavailable"
  | "namespace-limit"
  | "mount-failed"
  | "exec-failed"
  | "unknown"

export interface BwrapFailure {
  code: BwrapFailureCode
  /** bwrap's own line, for the record. */
  detail: string
  /** What the person should do, one sentence. */
  hint: string
}

const PATTERNS: { code: BwrapFailureCode; test: RegExp; hint: string }[] = [
  {
    code: "userns-restricted",
    test: /setting up uid map: Permission denied|uid map|Operation not permitted.*user namespace/i,
    hint:
      "User namespaces are restricted (Ubuntu's AppArmor userns restriction): allow them for /usr/bin/bwrap " +
      "with an AppArmor profile (`abi <abi/4.0>, profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }`), or " +
      "set kernel.apparmor_restrict_unprivileged_userns=0.",
  },
  {
    code: "namespace-limit",
    test: /max_[\w*]+_namespaces|ENOSPC/i,
    hint:
      "A namespace limit is zero or exhausted: raise user.max_user_namespaces (and the other " +
      "user.max_*_namespaces sysctls) above 0.",
  },
  {
    code: "namespaces-denied",
    test: new RegExp(
      [
        "No permissions to create new namespace",
        "Creating new namespace failed",
        "unshare.*(Operation not permitted|Permission denied)",
      ].join("|"),
      "i",
    ),
    hint:
      "This host does not let bwrap create namespaces (a container without CAP_SYS_ADMIN or with seccomp " +
      "blocking unshare, or kernel.unprivileged_userns_clone=0): run on a host or container that allows user " +
      "namespaces.",
  },
  {
    code: "proc-unavailable",
    test: /Can't mount proc on \/newroot\/proc/i,
    hint:
      "/proc cannot be mounted in a new pid namespace (a nested container with masked /proc): run the " +
      "container with an unmasked /proc (e.g. Docker's --security-opt systempaths=unconfined) or on the host.",
  },
  {
    code: "exec-failed",
    test: /execvp .*: No such file or directory|execvp .*: Permission denied/i,
    hint:
      "The command was not found inside the sandbox: only /usr, configured trusted roots and the workspace are " +
      "visible; use an absolute path under /usr or add a trusted root.",
  },
  {
    code: "mount-failed",
    test: /Can't (bind mount|mount|create file|create dir|make symlink)|Can't find source path/i,
    hint:
      "A sandbox mount failed: check that the workspace and trusted roots exist and are not symlinks, then run " +
      "`opencode-mcp-orchestrator doctor`.",
  },
]

/**
 * Reads bwrap's stderr. Only lines bwrap itself prints (`bwrap: ...`) count: a sandboxed command that
 * prints the same words must not be mistaken for a broken host.
 */
export function classifyBwrapFailure(stderr: string): BwrapFailure | undefined {
  // Setup errors are the first thing bwrap prints; later lines belong to the command.
  const line = stderr.split("\n")[0] ?? ""
  if (!line.startsWith("bwrap: ")) return undefined
  const known = PATTERNS.find((pattern) => pattern.test.test(line))
  if (known) return { code: known.code, detail: line, hint: known.hint }
  return {
    code: "unknown",
    detail: line,
    hint: "bwrap could not set up the sandbox; run `opencode-mcp-orchestrator doctor` for a probe of each profile.",
  }
}
