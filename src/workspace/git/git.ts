// Git on a workspace without running anything the repository controls on the host. A repository is
// untrusted input: its config names programs (core.fsmonitor, filters, textconv, diff.external, the
// pager, hooks) and a `.git` planted between the workspace and the repository root redirects
// discovery to a config of the planter's choosing. So the repository is found by walking the
// filesystem here (no git runs), pinned by the caller, and every git command runs inside the
// read-only, network-less sandbox with the repository's program settings overridden.
import { AppError } from "../../errors"
import type { RunResult } from "../../util/process"
import {
  gitMetadataPaths,
  hostFs,
  pathRules,
  planSandbox,
  runSandboxed,
  type FsView,
  type HostContext,
} from "../../sandbox"

export interface Repository {
  /** The work tree's top directory (canonical). */
  root: string
  /** The Git directory GIT_DIR names: `root/.git`, or a linked worktree's or submodule's gitdir. */
  gitDir: string
}

/**
 * The nearest enclosing repository of a canonical directory, found by lstat alone: undefined outside
 * one, or the Sandbox error naming the rule when its `.git` is a pointer git metadata admission refuses
 * (sandbox/git-metadata.ts: a `gitdir:` without git's link back), which is never followed.
 */
export function locateRepository(
  dir: string,
  host: HostContext,
  fs: FsView = hostFs,
): Repository | AppError | undefined {
  for (let current = dir; ; current = current.slice(0, current.lastIndexOf("/")) || "/") {
    if (fs.lstat(`${current}/.git`) !== undefined) {
      try {
        const metadata = gitMetadataPaths(current, pathRules(host.home, host.credentials, fs), fs)
        // [.git] for a plain repository; [.git file, gitdir, commondir?] for a linked worktree or submodule.
        return { root: current, gitDir: metadata[1] ?? metadata[0]! }
      } catch (error) {
        if (error instanceof AppError) return error
        throw error
      }
    }
    if (current === "/") return undefined
  }
}

/** The same, with a refused `.git` counted as no git evidence (what changes are measured by). */
export function findRepository(dir: string, host: HostContext, fs: FsView = hostFs): Repository | undefined {
  const found = locateRepository(dir, host, fs)
  return found instanceof AppError ? undefined : found
}

/** Settings that switch off every program a repository's config can name, for one command line. */
const NO_REPOSITORY_PROGRAMS = [
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "core.pager=cat",
  "-c",
  "diff.external=",
  "-c",
  "core.sshCommand=false",
  "-c",
  "protocol.allow=never",
  // Ownership checks guard against another user's config running; nothing runs on the host here.
  "-c",
  "safe.directory=*",
  "--no-optional-locks",
  "--no-pager",
]

const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  GIT_NO_REPLACE_OBJECTS: "1",
  GIT_OPTIONAL_LOCKS: "0",
  GIT_PAGER: "cat",
}

export interface GitOptions {
  /** Where git starts (inside the repository); default its root. */
  cwd?: string
  timeoutMs?: number
  maxOutputBytes?: number
  /** More environment (GIT_INDEX_FILE, an author for commit-tree). */
  env?: Record<string, string>
}

/**
 * `git <args>` on a pinned repository, inside the read-only sandbox. Undefined when the repository's
 * root cannot be a sandbox workspace (HOME itself under version control, say): no git evidence then,
 * rather than git on the host.
 */
export function sandboxedGit(
  repository: Repository,
  host: HostContext,
  args: string[],
  options: GitOptions = {},
): Promise<RunResult | undefined> {
  return gitInSandbox(
    { workspace: repository.root, gitDir: repository.gitDir, workTree: repository.root, writable: false },
    host,
    args,
    options,
  )
}

/** Where a sandboxed git runs: the sandbox's workspace (writable or not) and the repository inside it. */
export interface GitPlace {
  workspace: string
  gitDir: string
  workTree: string
  writable: boolean
}

/**
 * The same, for a repository of our own (an isolated worktree's private Git directory): `writable`
 * mounts the workspace read-write, with no network, so git can write objects and the index there.
 */
export async function gitInSandbox(
  place: GitPlace,
  host: HostContext,
  args: string[],
  options: GitOptions = {},
): Promise<RunResult | undefined> {
  let plan: ReturnType<typeof planSandbox>
  try {
    const profile = place.writable
      ? ({ kind: "runner", workspace: "writable", network: "disabled" } as const)
      : ({ kind: "scout" } as const)
    plan = planSandbox({ profile, workspace: place.workspace, cwd: options.cwd, host }, hostFs)
  } catch {
    // No sandbox for this place (its plan is refused): no git answer, which callers treat as unknown.
    return undefined
  }
  plan.env = { ...plan.env, ...GIT_ENV, ...options.env, GIT_DIR: place.gitDir, GIT_WORK_TREE: place.workTree }
  const result = await runSandboxed(plan, ["git", ...NO_REPOSITORY_PROGRAMS, ...args], {
    timeoutMs: options.timeoutMs ?? 30_000,
    maxOutputBytes: options.maxOutputBytes ?? 32 * 1024 * 1024,
  })
  if (result.failure) return undefined
  return { ...result, code: result.exitCode }
}
