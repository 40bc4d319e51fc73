// What a sandboxed command may run besides /usr: inherited PATH entries that resolve under /usr,
// `sandboxRuntime.trustedRoots` from config, and the older `OPENCODE_SANDBOX_TOOLCHAIN_DIRS`. Each
// yields read-only mounts, PATH entries and (trusted roots only) variables whose values stay inside
// their root. Re-evaluated per invocation, so edits to config.json apply without a restart.
import { fail } from "../errors"
import type { FsView } from "./fs-view"
import { canonicalDir, isInside, type PathRules } from "./host-paths"

/** Structurally the config schema's TrustedRoot; declared here so the plugin bundle does not pull zod. */
export interface TrustedRootInput {
  root: string
  pathEntries?: readonly string[]
  environment?: Readonly<Record<string, string>>
}

export interface Toolchain {
  /** Canonical directories to mount read-only at the same path. */
  mounts: string[]
  /** PATH inside the sandbox, in order. */
  path: string[]
  env: Record<string, string>
}

export const DEFAULT_PATH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]

/** The sandbox owns these; a trusted root's `environment` may not replace them. */
const CORE_VARIABLES = new Set(["HOME", "PATH", "TMPDIR", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "LANG", "TERM"])

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Inherited PATH entries kept only when they canonicalize under /usr (already mounted read-only). */
export function inheritedUsrEntries(hostPath: string | undefined, fs: FsView): string[] {
  const kept: string[] = []
  for (const entry of (hostPath ?? "").split(":")) {
    if (!entry.startsWith("/")) continue
    const canonical = fs.realpath(entry)
    if (canonical && isInside(canonical, "/usr") && fs.lstat(canonical) === "dir") kept.push(canonical)
  }
  return kept
}

/** A path relative to root; lexically it must not climb out, and if it exists its real path must stay in. */
function insideRoot(root: string, relative: string, what: string, fs: FsView): string {
  const bad = () =>
    fail(
      "Sandbox",
      `Trusted root ${root}: ${what} ${JSON.stringify(relative)} must be a relative path inside the root.`,
      'Write it relative to the root, without `..`, e.g. "bin".',
      {
        root,
        value: relative,
      },
    )
  if (relative.startsWith("/") || relative.split("/").includes("..")) throw bad()
  const joined =
    relative === "." || relative === "" ? root : `${root}/${relative.replace(/^\.\//, "").replace(/\/+$/, "")}`
  const canonical = fs.realpath(joined)
  if (canonical !== undefined && !isInside(canonical, root)) throw bad()
  return canonical ?? joined
}

function trustedRoot(input: TrustedRootInput, rules: PathRules, fs: FsView): Toolchain {
  const root = canonicalDir(input.root, "trusted root", rules, fs)
  const path = (input.pathEntries ?? []).map((entry) => {
    const dir = insideRoot(root, entry, "pathEntries entry", fs)
    if (fs.lstat(dir) !== "dir")
      throw fail(
        "Sandbox",
        `Trusted root ${root}: pathEntries entry ${JSON.stringify(entry)} is not a directory.`,
        "Remove the entry or create the directory.",
        { root, entry },
      )
    return dir
  })
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(input.environment ?? {})) {
    if (!VARIABLE_NAME.test(name) || CORE_VARIABLES.has(name))
      throw fail(
        "Sandbox",
        `Trusted root ${root}: environment variable ${JSON.stringify(name)} is not allowed.`,
        `Use another name; ${[...CORE_VARIABLES].join(", ")} belong to the sandbox.`,
        {
          root,
          name,
        },
      )
    env[name] = insideRoot(root, value, `environment ${name}`, fs)
  }
  return { mounts: [root], path, env }
}

/** Parses `OPENCODE_SANDBOX_TOOLCHAIN_DIRS` (colon-separated absolute directories; empty entries ignored). */
export function toolchainDirs(raw: string | undefined, rules: PathRules, fs: FsView): string[] {
  return (raw ?? "")
    .split(":")
    .filter((entry) => entry.trim() !== "")
    .map((entry) => canonicalDir(entry, "toolchain dir", rules, fs))
}

/**
 * PATH order: trusted roots first (a configured runtime should win over the system one), then inherited
 * /usr entries (version-manager aliases), the defaults, and the compatibility dirs appended last.
 */
export function resolveToolchain(
  hostPath: string | undefined,
  roots: readonly TrustedRootInput[],
  rawToolchainDirs: string | undefined,
  rules: PathRules,
  fs: FsView,
): Toolchain {
  const trusted = roots.map((root) => trustedRoot(root, rules, fs))
  const extra = toolchainDirs(rawToolchainDirs, rules, fs)
  const path = [...trusted.flatMap((t) => t.path), ...inheritedUsrEntries(hostPath, fs), ...DEFAULT_PATH, ...extra]
  return {
    mounts: [...new Set([...trusted.flatMap((t) => t.mounts), ...extra])],
    path: [...new Set(path)],
    env: Object.assign({}, ...trusted.map((t) => t.env)),
  }
}
