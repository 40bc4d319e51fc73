// Which host paths may enter a sandbox, decided on canonical paths only. A workspace, a trusted
// toolchain root or a gitdir target is canonicalized (every symlink resolved) first, then checked
// against the places a sandbox must never see: broad system roots, HOME and its ancestors, runtime
// pseudo-filesystems, Git metadata, and credential stores.
import { fail } from "../errors"
import { BROAD_ROOTS } from "../util/broad-roots"
import type { FsView } from "./fs-view"
import { stateJson } from "../util/sealed"

/** Credential stores under HOME; a mount that equals, contains or sits inside one is refused. */
export const HOME_CREDENTIALS = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".kube",
  ".docker",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".password-store",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".config/gcloud",
  ".config/gh",
  ".config/git/credentials",
  ".config/opencode",
  ".local/share/opencode",
  ".local/state/opencode",
  ".config/opencode-mcp-orchestrator",
  ".local/share/opencode-mcp-orchestrator",
  ".local/state/opencode-mcp-orchestrator",
  ".cache/opencode",
  ".cache/opencode-mcp-orchestrator",
  ".codex",
  ".claude",
  ".claude.json",
  ".config/anthropic",
  ".config/git",
  ".gitconfig",
  ".bash_history",
  ".config/containers",
] as const

/** The XDG base each HOME-relative prefix stands for: an entry under one follows that base when it moves. */
const XDG_PREFIXES = [
  [".config", "xdgConfigHome"],
  [".local/share", "xdgDataHome"],
  [".local/state", "xdgStateHome"],
  [".cache", "xdgCacheHome"],
] as const

export interface XdgBases {
  home: string
  xdgConfigHome: string
  xdgDataHome: string
  xdgStateHome: string
  xdgCacheHome: string
}

/**
 * HOME_CREDENTIALS at their moved places: every entry under `.config` follows XDG_CONFIG_HOME, under
 * `.local/share` XDG_DATA_HOME, and so on. The HOME spellings stay protected by pathRules; a base left
 * at its default adds nothing.
 */
export function relocatedCredentials(bases: XdgBases): string[] {
  return HOME_CREDENTIALS.flatMap((entry) => {
    const match = XDG_PREFIXES.find(([prefix]) => entry.startsWith(`${prefix}/`))
    if (!match) return []
    const [prefix, key] = match
    if (bases[key] === `${bases.home}/${prefix}`) return []
    return [`${bases[key]}/${entry.slice(prefix.length + 1)}`]
  })
}

/** Nothing inside these is ever mounted: kernel interfaces, host configuration and secrets, runtime state. */
const FORBIDDEN_TREES = ["/proc", "/sys", "/dev", "/etc", "/run", "/boot", "/var/run"]
/** System state a project never lives in; a toolchain may (under /usr), a workspace may not. */
const SYSTEM_TREES = [
  "/usr",
  "/var/lib",
  "/var/log",
  "/var/cache",
  "/var/spool",
  "/var/mail",
  "/var/backups",
  "/var/tmp/systemd-private",
]

export type PathPurpose = "workspace" | "trusted root" | "toolchain dir" | "gitdir"

export interface PathRules {
  /** Canonical HOME. */
  home: string
  /** Canonical credential paths (HOME_CREDENTIALS under home, plus XDG-relocated ones). */
  credentials: string[]
  /**
   * Isolated worktrees the engine created, admitted as workspaces although they sit in our cache (see engineWorktree).
   */
  worktrees?: EngineWorktrees
}

/**
 * Where the engine keeps isolated worktrees (`root/lane-<n>/`, reused patch after patch; `root/<patch id>/`
 * for ones made before lanes) and the registry under the state dir, which no sandbox ever mounts,
 * proving that it created each one: `registry/lanes/lane-<n>.json` (the lane's claim) or
 * `registry/<patch id>.json`.
 */
export interface EngineWorktrees {
  root: string
  registry: string
  /**
   * The patch whose worktree is admitted, when the engine runs a task's turn there again: a lane then
   * counts only while its claim names this patch (another worker may hold it since).
   */
  owner?: string
}

/** A patch id: the name of one patch's registry entry (and of its worktree, for ones made before lanes). */
export const PATCH_ID = /^patch_[a-z0-9]+_[a-f0-9]+$/

/** A worktree lane's name (workspace/worktree/lanes.ts). */
export const LANE_NAME = /^lane-[1-9][0-9]{0,2}$/

/**
 * True when `path` is one isolated worktree the engine created, or inside one. Our cache dir is tool
 * state and refused as a workspace; this exception is exact: a direct child of the worktrees root
 * named like a lane (or a patch id), with a claim (or registry entry) a sandboxed process cannot forge.
 */
export function engineWorktree(path: string, rules: PathRules, fs: FsView): boolean {
  const worktrees = rules.worktrees
  if (!worktrees || !path.startsWith(`${worktrees.root}/`)) return false
  const name = path.slice(worktrees.root.length + 1).split("/")[0]!
  if (LANE_NAME.test(name)) {
    const claim = `${worktrees.registry}/lanes/${name}.json`
    if (fs.lstat(claim) !== "file") return false
    return worktrees.owner === undefined || claimant(fs.readText(claim)) === worktrees.owner
  }
  if (!PATCH_ID.test(name) || fs.lstat(`${worktrees.registry}/${name}.json`) !== "file") return false
  return worktrees.owner === undefined || name === worktrees.owner
}

/** The patch a lane claim's text names (workspace/worktree/lanes.ts writes it), or undefined for anything else. */
function claimant(text: string | undefined): string | undefined {
  try {
    // Claims are sealed state files (util/sealed.ts): one that fails its own check names nobody.
    const body = text === undefined ? undefined : stateJson(text)
    const claim: unknown = body === undefined || "problem" in body ? undefined : JSON.parse(body.json)
    const patchId = typeof claim === "object" && claim !== null && "patchId" in claim ? claim.patchId : undefined
    return typeof patchId === "string" ? patchId : undefined
  } catch {
    // Not JSON: a claim nobody can be said to hold admits nobody's continue.
    return undefined
  }
}

export const isInside = (child: string, parent: string) =>
  child === parent || child.startsWith(parent === "/" ? "/" : `${parent}/`)

/** Resolves what the rules compare against, once per sandbox invocation. */
export function pathRules(
  home: string,
  extraCredentials: readonly string[],
  fs: FsView,
  worktrees?: EngineWorktrees,
): PathRules {
  const canonicalHome = fs.realpath(home) ?? home
  const credentials = [...HOME_CREDENTIALS.map((rel) => `${canonicalHome}/${rel}`), ...extraCredentials]
  // A credential path that exists may itself be a symlink (dotfile managers): compare both spellings.
  const both = credentials.flatMap((path) => [path, fs.realpath(path) ?? path])
  const canonicalWorktrees = worktrees && { ...worktrees, root: fs.realpath(worktrees.root) ?? worktrees.root }
  return {
    home: canonicalHome,
    credentials: [...new Set(both)],
    ...(canonicalWorktrees ? { worktrees: canonicalWorktrees } : {}),
  }
}

/** Why this canonical path may not be mounted for this purpose, or undefined when it may. */
export function refusal(path: string, purpose: PathPurpose, rules: PathRules, fs: FsView): string | undefined {
  if (!path.startsWith("/")) return "it is not an absolute path"
  if (BROAD_ROOTS.includes(path)) return `${path} is a broad system root`
  if (isInside(rules.home, path)) return path === rules.home ? "it is HOME itself" : "it contains HOME"
  const tree = FORBIDDEN_TREES.find((root) => isInside(path, root))
  if (tree) return `it is inside ${tree}`
  const system = purpose === "workspace" ? SYSTEM_TREES.find((root) => isInside(path, root)) : undefined
  if (system) return `it is inside ${system}, a system directory`
  // Our own cache is tool state, except the isolated worktrees the engine made there for its workers.
  const credential =
    purpose === "workspace" && engineWorktree(path, rules, fs)
      ? undefined
      : rules.credentials.find((cred) => isInside(path, cred) || isInside(cred, path))
  if (credential)
    return `it ${isInside(path, credential) ? "is inside" : "contains"} the credential store ${credential}`
  if (purpose === "gitdir") return undefined
  if (path.split("/").includes(".git")) return "it is Git metadata"
  // A bare repository or a linked worktree's gitdir has no `.git` component but is Git metadata all the same.
  if (fs.lstat(`${path}/HEAD`) === "file" && fs.lstat(`${path}/objects`) === "dir") return "it is Git metadata"
  return undefined
}

/** realpath + directory + refusal, as one fail-closed step with an actionable error. */
export function canonicalDir(path: string, purpose: PathPurpose, rules: PathRules, fs: FsView): string {
  if (!path.startsWith("/"))
    throw fail("Sandbox", `The ${purpose} ${JSON.stringify(path)} is not an absolute path.`, "Pass an absolute path.")
  const canonical = fs.realpath(path)
  if (!canonical || fs.lstat(canonical) !== "dir")
    throw fail(
      "Sandbox",
      `The ${purpose} ${path} does not exist or is not a directory.`,
      "Pass an existing directory.",
      {
        path,
      },
    )
  const why = refusal(canonical, purpose, rules, fs)
  if (why)
    throw fail(
      "Sandbox",
      `Refusing ${purpose} ${path}${canonical === path ? "" : ` (resolves to ${canonical})`}: ${why}.`,
      purpose === "workspace"
        ? "Run the delegation in a project directory, not a system, home or credential directory."
        : "Point it at a narrower directory that holds only the toolchain.",
      { path, canonical, purpose },
    )
  return canonical
}
