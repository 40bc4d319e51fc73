// Shared fixtures for the escape battery: a disposable tree per attempt (a git workspace, a linked
// worktree, a directory outside, a fake HOME full of fake credentials), a way to run an attack inside a
// profile's sandbox on the real /usr/bin/bwrap, and the same attack as a control outside any sandbox.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { run, type RunResult } from "../../src/util/process"
import { BWRAP, bwrapArgs, ISOLATION_FLAGS } from "../../src/sandbox/argv"
import { hostFs } from "../../src/sandbox/fs-view"
import { planSandbox, type HostContext } from "../../src/sandbox/plan"
import type { SandboxProfile } from "../../src/sandbox/profiles"
import { runSandboxed, type SandboxRunResult } from "../../src/sandbox/run"
import { git } from "../helpers/git"

export interface Fixture {
  root: string
  workspace: string
  worktree: string
  outside: string
  home: string
  host: HostContext
  cleanup(): void
}

/** `worktree: true` adds a commit and a linked worktree (slow: three more git runs), for gitdir attempts. */
export async function makeFixture(options: { worktree?: boolean } = {}): Promise<Fixture> {
  const root = mkdtempSync("/tmp/orch-sandbox-test-")
  const workspace = `${root}/ws`
  const outside = `${root}/outside`
  const home = `${root}/home`
  for (const dir of [workspace, outside, `${home}/.ssh`, `${home}/.aws`, `${home}/.local/share/opencode`])
    mkdirSync(dir, { recursive: true })
  writeFileSync(`${home}/.ssh/id_ed25519`, "FAKE-SSH-KEY\n")
  writeFileSync(`${home}/.aws/credentials`, "aws_secret_access_key=FAKE-AWS\n")
  writeFileSync(`${home}/.local/share/opencode/auth.json`, '{"key":"FAKE-OPENCODE"}\n')
  writeFileSync(`${outside}/secret.txt`, "OUTSIDE-SECRET\n")
  writeFileSync(`${workspace}/a.txt`, "hello\n")
  await git(workspace, "init", "-q", "-b", "main")
  const worktree = `${root}/wt`
  if (options.worktree) {
    await git(workspace, "add", "a.txt")
    await git(workspace, "commit", "-q", "-m", "init")
    await git(workspace, "worktree", "add", "-q", worktree)
  }
  const host: HostContext = { home, path: "/usr/local/bin:/usr/bin:/bin", trustedRoots: [], credentials: [] }
  return {
    root,
    workspace,
    worktree,
    outside,
    home,
    host,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}

/** Substitutes the fixture's paths into an attack script ({WS}, {WT}, {OUT}, {HOME}, {ROOT}, and extras). */
export function fill(script: string, fx: Fixture, extra: Record<string, string> = {}): string {
  const values: Record<string, string> = {
    WS: fx.workspace,
    WT: fx.worktree,
    OUT: fx.outside,
    HOME: fx.home,
    ROOT: fx.root,
    ...extra,
  }
  return script.replace(/\{([A-Z_]+)\}/g, (whole, name: string) => values[name] ?? whole)
}

export const STARTED = "SANDBOX_STARTED"

export async function inSandbox(
  profile: SandboxProfile,
  fx: Fixture,
  script: string,
  options: { workspace?: string; timeoutMs?: number; maxOutputBytes?: number } = {},
): Promise<SandboxRunResult> {
  const plan = planSandbox({ profile, workspace: options.workspace ?? fx.workspace, host: fx.host }, hostFs)
  // The marker proves the command ran, so a denial is the sandbox's, not a bwrap setup failure.
  return runSandboxed(plan, ["/bin/bash", "-c", `echo ${STARTED}; ${script}`], {
    timeoutMs: options.timeoutMs ?? 15_000,
    maxOutputBytes: options.maxOutputBytes ?? 64 * 1024,
  })
}

/** The same attack with no sandbox at all, from the same directory, with the test's own environment. */
export function onHost(
  fx: Fixture,
  script: string,
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return run(["/bin/bash", "-c", script], {
    cwd: options.cwd ?? fx.workspace,
    env: { ...process.env },
    timeoutMs: options.timeoutMs ?? 15_000,
  })
}

/**
 * Controls for attacks that would damage the host if run there (umount, remount): the same sandbox
 * minus the protections that stop them (`--cap-drop ALL` and the user-namespace lock). It shows the
 * attack works against a weaker sandbox, so the denial really is those flags' doing.
 */
export function inWeakenedSandbox(profile: SandboxProfile, fx: Fixture, script: string): Promise<RunResult> {
  const plan = planSandbox({ profile, workspace: fx.workspace, host: fx.host }, hostFs)
  const weakened = new Set<string>(["--cap-drop", "ALL", "--unshare-user", "--disable-userns"])
  const args = bwrapArgs(plan, ["/bin/bash", "-c", script])
  const flags = args.slice(0, ISOLATION_FLAGS.length).filter((arg) => !weakened.has(arg))
  return run([BWRAP, ...flags, ...args.slice(ISOLATION_FLAGS.length)], { env: {}, timeoutMs: 15_000 })
}
