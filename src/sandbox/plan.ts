// Turns a profile, a workspace and the host context into the complete sandbox layout (mounts,
// environment, working directory, network). Every host path is canonicalized and checked here, and
// the finished mount list goes through the host-side destination check, so a plan that exists is one
// bwrap may run. Pure apart from the FsView it is handed.
import { fail } from "../errors"
import type { FsView } from "./fs-view"
import { gitMetadataPaths } from "./git-metadata"
import { canonicalDir, isInside, pathRules, relocatedCredentials, type EngineWorktrees } from "./host-paths"
import { checkMounts, type Mount } from "./mounts"
import { policyMarkerFolders } from "./policy-markers"
import { profileName, profilePolicy, type NetworkAccess, type SandboxProfile } from "./profiles"
import { hostNetworkMounts, systemMounts } from "./system-mounts"
import { scopeBinds } from "./scope-binds"
import { resolveToolchain, type TrustedRootInput } from "./toolchains"
import type { Flags } from "../config/flags"
import { LIMIT_SPECS, type ResourceCaps } from "../config/limits"
import { resolvePaths } from "../config/paths"

const DEFAULT_CAPS: ResourceCaps = {
  tmpMaxBytes: LIMIT_SPECS.tmpMaxBytes.fallback,
  fileMaxBytes: LIMIT_SPECS.fileMaxBytes.fallback,
  maxProcesses: LIMIT_SPECS.maxProcesses.fallback,
}

/** HOME inside the sandbox: private, empty, on the sandbox's own /tmp. */
export const SANDBOX_HOME = "/tmp/home"

export interface HostContext {
  /** The host HOME (never mounted; refused as a workspace or toolchain root). */
  home: string
  /** The host PATH, of which entries resolving under /usr are kept. */
  path?: string
  /** Raw `OPENCODE_SANDBOX_TOOLCHAIN_DIRS`. */
  toolchainDirs?: string
  trustedRoots: readonly TrustedRootInput[]
  /** Credential locations beyond the HOME-relative defaults (XDG-relocated config, data and state). */
  credentials: readonly string[]
  /** Size of the sandbox's /tmp, largest file, process count (limits.ts; defaults when absent). */
  caps?: ResourceCaps
  /**
   * The engine's isolated worktrees, admitted as workspaces. Absent when admitting a directory a
   * caller named (an MCP tool's cwd): only the engine and the plugin, for the sessions the engine
   * started, see them.
   */
  worktrees?: EngineWorktrees
}

export interface SandboxRequest {
  profile: SandboxProfile
  workspace: string
  /** Where the command starts; inside the workspace. Defaults to the workspace. */
  cwd?: string
  host: HostContext
  /**
   * More directories mounted read-only, each admitted by the workspace rule (the engine copying a
   * user's files into an isolated worktree: the copy runs where a swapped symlink reaches nothing).
   */
  readOnly?: readonly string[]
  /** More directories mounted writable, admitted like the workspace (patch_apply's own run directory). */
  writable?: readonly string[]
  /**
   * Our own program, mounted read-only so it can run inside (patch_apply's write step): the binary, or
   * bun and the source tree. Named by the engine (util/self.ts), never by a caller; each must be a
   * canonical file, or a directory the toolchain rule admits.
   */
  programs?: readonly string[]
  /**
   * A scoped worker's scope entries (src/workspace/scope.ts): a writable profile then mounts the workspace
   * read-only and binds only the scope's existing paths writable (scope-binds.ts); empty binds nothing.
   */
  scope?: readonly string[]
  /**
   * A read-only profile sees the workspace through an overlay whose writes go to a tmpfs that vanishes
   * with the sandbox (the verification restoring the check's definition): the host's files never change.
   */
  overlay?: boolean
  /**
   * With `scope`: a new file the write tool is about to create (workspace-relative), which the scope
   * names but no existing path covers (scope-binds.ts). Only for our own fixed write script.
   */
  creating?: string
  /**
   * Leave the policy markers' folders writable: only patch_apply's write step, carrying a patch the
   * parent accepted with allow_autorun (the mode they stated stays remembered, engine/admission/mode-memory.ts).
   */
  markersWritable?: boolean
}

export interface SandboxPlan {
  profile: string
  workspace: string
  cwd: string
  network: NetworkAccess
  mounts: Mount[]
  env: Record<string, string>
  caps: ResourceCaps
  /**
   * What each checked mount (workspace, Git metadata, toolchain and read-only dirs) must be once inside
   * (`device:inode`, taken after the checks, not following a final symlink). bwrap resolves a bind's
   * source by name when it starts: a process that swaps a checked path for a symlink in between would
   * get the link's target mounted. The sandbox compares these before the command runs and refuses to
   * run it on a mismatch (run.ts).
   */
  pins: { path: string; id: string }[]
  /** A scoped plan's paths left read-only, each with why (what the shell tells the model); else absent. */
  readOnlyScope?: string[]
}

/** What hostContext needs of the flags (the plugin reads its own per invocation; see plugin/env.ts). */
export type HostFlags = Pick<
  Flags,
  "home" | "path" | "xdgConfigHome" | "xdgDataHome" | "xdgStateHome" | "xdgCacheHome" | "sandbox"
>

/** The host context from the flags and the trusted roots of the loaded config. */
export function hostContext(flags: HostFlags, trustedRoots: readonly TrustedRootInput[] = []): HostContext {
  // One list (host-paths), relocated by one rule: every entry under a moved XDG base follows it.
  const credentials = relocatedCredentials(flags)
  const { tmpMaxBytes, fileMaxBytes, maxProcesses } = flags.sandbox.limits
  const paths = resolvePaths(flags)
  const worktrees = { root: paths.worktreesDir, registry: paths.patchesDir }
  return {
    home: flags.home,
    path: flags.path,
    toolchainDirs: flags.sandbox.toolchainDirs,
    trustedRoots,
    credentials,
    caps: { tmpMaxBytes, fileMaxBytes, maxProcesses },
    worktrees,
  }
}

const depth = (path: string) => path.split("/").length

/**
 * A program of ours to mount: one canonical regular file (the binary, wherever it is installed), or an admitted
 * directory.
 */
function programPath(path: string, rules: ReturnType<typeof pathRules>, fs: FsView): string {
  if (fs.realpath(path) === path && fs.lstat(path) === "file") return path
  return canonicalDir(path, "toolchain dir", rules, fs)
}

export function planSandbox(request: SandboxRequest, fs: FsView): SandboxPlan {
  const policy = profilePolicy(request.profile)
  const caps = request.host.caps ?? DEFAULT_CAPS
  const rules = pathRules(request.host.home, request.host.credentials, fs, request.host.worktrees)
  const workspace = canonicalDir(request.workspace, "workspace", rules, fs)
  const cwd = fs.realpath(request.cwd ?? workspace)
  if (!cwd || !isInside(cwd, workspace) || fs.lstat(cwd) !== "dir")
    throw fail(
      "Sandbox",
      `The working directory ${request.cwd} is not a directory inside the workspace ${workspace}.`,
      "Pass a cwd inside the workspace.",
      { cwd: request.cwd, workspace },
    )
  const toolchain = resolveToolchain(
    request.host.path,
    request.host.trustedRoots,
    request.host.toolchainDirs,
    rules,
    fs,
  )
  const git = policy.protectGit ? gitMetadataPaths(workspace, rules, fs) : []
  const markers = request.markersWritable ? [] : policyMarkerFolders(workspace, fs)
  const readOnly = (request.readOnly ?? []).map((dir) => canonicalDir(dir, "workspace", rules, fs))
  const writable = (request.writable ?? []).map((dir) => canonicalDir(dir, "workspace", rules, fs))
  const extra = [...readOnly, ...writable]
  if (
    extra.some(
      (dir, index) =>
        isInside(dir, workspace) ||
        isInside(workspace, dir) ||
        extra.some((other, at) => at !== index && isInside(dir, other)),
    )
  )
    throw fail(
      "Sandbox",
      `A read-only or writable directory overlaps the workspace ${workspace} or another one.`,
      "Pass disjoint directories.",
      { workspace, readOnly, writable },
    )
  const programs = (request.programs ?? []).map((path) => programPath(path, rules, fs))
  const writes = policy.workspace === "writable"
  const scoped =
    writes && request.scope ? scopeBinds(workspace, request.scope, fs, { creating: request.creating }) : undefined

  const binds: Mount[] = [
    ...toolchain.mounts.map((dir): Mount => ({ op: "ro-bind", source: dir, dest: dir })),
    request.overlay && !writes
      ? { op: "tmp-overlay", source: workspace, dest: workspace }
      : { op: writes && !scoped ? "bind" : "ro-bind", source: workspace, dest: workspace },
    ...(scoped?.binds ?? []).map(({ path }): Mount => ({ op: "bind", source: path, dest: path })),
    ...git.map((path): Mount => ({ op: "ro-bind", source: path, dest: path })),
    ...markers.map((path): Mount => ({ op: "ro-bind", source: path, dest: path })),
    ...readOnly.map((dir): Mount => ({ op: "ro-bind", source: dir, dest: dir })),
    ...writable.map((dir): Mount => ({ op: "bind", source: dir, dest: dir })),
    ...programs.map((path): Mount => ({ op: "ro-bind", source: path, dest: path })),
  ]
  // Shallower first (stable): a toolchain root holding the workspace must not cover it, and the
  // read-only Git and marker mounts must land on top of the writable workspace (and a scope's binds
  // of the same depth), never under it.
  binds.sort((a, b) => depth(a.dest) - depth(b.dest))

  const mounts: Mount[] = [
    ...systemMounts(fs),
    ...(policy.network === "host" ? hostNetworkMounts(fs) : []),
    { op: "proc", dest: "/proc" },
    { op: "dev", dest: "/dev" },
    { op: "tmpfs", dest: "/tmp", size: caps.tmpMaxBytes },
    { op: "dir", dest: SANDBOX_HOME },
    ...binds,
    // bwrap's root is a tmpfs; read-only, so nothing but /tmp and a writable workspace takes writes.
    { op: "remount-ro", dest: "/" },
  ]
  checkMounts(mounts, fs)

  const env: Record<string, string> = {
    ...toolchain.env,
    HOME: SANDBOX_HOME,
    PATH: toolchain.path.join(":"),
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    TERM: "dumb",
  }
  // Every host directory the plan checked, the workspace included: a writer in an ancestor workspace
  // can swap a nested workspace (or its .git) for a symlink while this sandbox starts.
  // A scoped path's identity was taken before its checks (scope-binds.ts): one swapped after them differs.
  const before = new Map((scoped?.binds ?? []).map(({ path, id }) => [path, id]))
  // An overlay is a new filesystem (its own device), so it has no identity to compare with the host's;
  // bwrap opens its source once, at mount time, and the verification that uses it runs while the
  // task still holds the workspace (no writer of ours runs there then).
  const pins = binds.flatMap((bind) => {
    if (bind.op !== "bind" && bind.op !== "ro-bind") return []
    const id = before.has(bind.source) && bind.op === "bind" ? before.get(bind.source) : fs.identity?.(bind.source)
    // Checked a moment ago: a symlink or nothing there now is a swap, and a link's inode must never be pinned.
    if (fs.identity && id === undefined)
      throw fail(
        "Sandbox",
        `${bind.source} changed while the sandbox checked it (it is now a symlink, or gone).`,
        "Nothing ran. Check who is replacing that path (a delegated agent's process?), then retry.",
        { mount: bind },
      )
    return id ? [{ path: bind.dest, id }] : []
  })
  const { network } = policy
  const plan = { profile: profileName(request.profile), workspace, cwd, network, mounts, env, caps, pins }
  return scoped?.readOnly.length ? { ...plan, readOnlyScope: scoped.readOnly } : plan
}
