// Isolated worktrees: a worker in `isolation: "worktree"` edits a copy of the user's state, never the
// user's checkout. The copy is the working tree as the user sees it (HEAD plus staged, unstaged and
// untracked-not-ignored files), listed by git in the read-only sandbox (git.ts) and copied by tar in
// a sandbox that sees the workspace read-only and the worktree writable (a symlink swapped in by a
// process writing the workspace meanwhile reaches nothing outside them). Nothing is written into the
// user's `.git`: no `git worktree add`, no objects, no index.
// The copy lives in a lane, `<worktrees>/lane-<n>/tree` (lanes.ts: reused patch after patch, so
// OpenCode's instance for it stays warm), next to a private Git directory (`git/`) whose snapshot tree
// is the base every patch is taken against (patch.ts). The worker's sandbox mounts only `tree/`, so
// it sees no Git directory at all; a `.git` it creates there is reported as planted.
import { randomBytes } from "node:crypto"
import { lstatSync } from "node:fs"
import { mkdir, rm } from "node:fs/promises"
import type { Paths } from "../../config/paths"
import { AppError, fail } from "../../errors"
import { hostFs, LANE_NAME, planSandbox, runSandboxed, type HostContext } from "../../sandbox"
import { stagingDirs } from "../apply"
import { locateRepository, sandboxedGit, type Repository, layoutOf, privateGit, type WorktreeLayout } from "../git"
import { claimLane, MAX_LANES, releaseLane, type LaneBounds } from "./lanes"
import { savePatchRecord, type PatchRecord } from "../patches"

/** A snapshot larger than this is refused: a worker needs a project, not a data set. */
const SNAPSHOT_LIMITS = { files: 20_000, bytes: 256 * 1024 * 1024 }

/**
 * In the private repository, content goes in and out byte for byte: no end-of-line conversion, no
 * filter, no ident expansion, whatever the snapshot's own `.gitattributes` say (info/attributes wins).
 */
const EXACT_ATTRIBUTES = "* -text !eol -filter -ident -working-tree-encoding\n"

async function userGit(repository: Repository, host: HostContext, args: string[], cwd: string): Promise<string> {
  const result = await sandboxedGit(repository, host, args, { cwd })
  if (result?.code !== 0)
    throw fail(
      "Usage",
      `git ${args[0]} failed on ${repository.root}: ` +
        `${result ? result.stderr.trim().slice(0, 400) : "git could not run in the read-only sandbox"}.`,
      "Check the repository with `git status`, then retry.",
    )
  return result.stdout
}

/** A name git printed that is not UTF-8 arrives with U+FFFD in it: it could not be named to tar again. */
function checkName(path: string) {
  if (path.includes("\uFFFD"))
    throw fail(
      "Usage",
      `The workspace holds a file whose name is not valid UTF-8 (${JSON.stringify(path)}); isolated worktrees copy ` +
        `UTF-8 names only.`,
      'Rename it, or use isolation "in_place".',
      {
        path,
      },
    )
}

/** What the snapshot copies: paths relative to the workspace, tracked (from the index) and untracked. Pure. */
export function snapshotPaths(staged: string, untracked: string): string[] {
  const paths = new Set<string>()
  for (const entry of staged.split("\0").filter(Boolean)) {
    const tab = entry.indexOf("\t")
    const [mode] = entry.slice(0, tab).split(" ")
    const path = entry.slice(tab + 1)
    if (mode === "160000")
      throw fail(
        "Usage",
        `The repository has a submodule at ${path}; isolated worktrees do not copy submodules.`,
        'Use isolation "in_place" for this repository, or delegate inside the submodule itself.',
        { path },
      )
    checkName(path)
    paths.add(path)
  }
  for (const path of untracked.split("\0").filter(Boolean)) {
    checkName(path)
    // ls-files shows a nested repository as its directory, with a trailing slash.
    if (path.endsWith("/"))
      throw fail(
        "Usage",
        `The workspace holds a nested Git repository at ${path}; isolated worktrees do not copy it.`,
        'Use isolation "in_place", or delegate inside that repository.',
        { path },
      )
    paths.add(path)
  }
  return [...paths].sort()
}

/** True when no directory between `root` and `rel` is a symlink (a copy must not follow one out of the tree). */
function plainParents(root: string, rel: string, seen: Map<string, boolean>): boolean {
  const parts = rel.split("/").slice(0, -1)
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join("/")
    let ok = seen.get(dir)
    if (ok === undefined) {
      const info = lstatSync(`${root}/${dir}`, { throwIfNoEntry: false }) // absent: nothing to copy below it
      ok = info?.isDirectory() === true
      seen.set(dir, ok)
    }
    if (!ok) return false
  }
  return true
}

export interface Created {
  record: PatchRecord
  layout: WorktreeLayout
}

/**
 * Snapshots the repository holding `workspace` (a canonical, admitted directory) into a new isolated
 * worktree and registers it (the registry entry is what admits the worktree as a workspace).
 */
export interface WorktreeOptions {
  host: HostContext
  paths: Pick<Paths, "worktreesDir" | "patchesDir">
  /** How much of the workspace is copied (SNAPSHOT_LIMITS by default). */
  limits?: typeof SNAPSHOT_LIMITS
  /** The task the worktree is for: its lane's claim and its registry entry name it. */
  taskId?: string
  /** The engine passes config maxWorktreeLanes and its unfinished tasks; the default knows of no task. */
  lanes?: LaneBounds
}

export async function createWorktree(
  workspace: string,
  {
    host,
    paths,
    limits = SNAPSHOT_LIMITS,
    taskId,
    lanes = { max: MAX_LANES, inUse: async () => false },
  }: WorktreeOptions,
): Promise<Created> {
  const repository = locateRepository(workspace, host)
  if (repository instanceof AppError) throw repository
  if (!repository)
    throw fail(
      "Usage",
      `${workspace} is not inside a Git repository; isolation "worktree" snapshots one.`,
      'Use isolation "in_place" outside a repository.',
    )
  const head =
    (await sandboxedGit(repository, host, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]))?.stdout.trim() || undefined
  const staged = await userGit(repository, host, ["ls-files", "-z", "-s", "--", "."], workspace)
  const untracked = await userGit(
    repository,
    host,
    ["ls-files", "-z", "--others", "--exclude-standard", "--", "."],
    workspace,
  )
  const files = snapshotPaths(staged, untracked)
  if (files.length > limits.files)
    throw fail(
      "Usage",
      `The snapshot would hold ${files.length} files, more than the ${limits.files} an isolated worktree takes.`,
      'Delegate in a subdirectory (cwd), or use isolation "in_place".',
    )
  // Sizes first, so an oversized snapshot is refused before anything is copied. Synchronous: thousands
  // of lstat calls cost a tenth of their promise-based form, and this is metadata only.
  const seen = new Map<string, boolean>()
  const entries: string[] = []
  let bytes = 0
  for (const path of files) {
    if (!plainParents(workspace, path, seen)) continue
    // deleted in the working tree: not in the snapshot
    const info = lstatSync(`${workspace}/${path}`, { throwIfNoEntry: false })
    if (!info || !(info.isFile() || info.isSymbolicLink())) continue
    bytes += info.size
    entries.push(path)
  }
  if (bytes > limits.bytes)
    throw fail(
      "Usage",
      `The snapshot would copy ${bytes} bytes, more than the ${limits.bytes} an isolated worktree takes.`,
      'Delegate in a subdirectory (cwd), or use isolation "in_place".',
    )

  const id = `patch_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  const layout = layoutOf(paths.worktreesDir, await claimLane(paths.worktreesDir, paths.patchesDir, id, taskId, lanes))
  const record: PatchRecord = {
    version: 1,
    id,
    status: "open",
    createdAt: new Date().toISOString(),
    layout,
    source: { workspace, root: repository.root, gitDir: repository.gitDir, head },
    base: "",
    taskId,
  }
  try {
    await savePatchRecord(paths.patchesDir, record)
    // A lane's earlier patch was removed with its files; a process that died while filling it was not.
    await emptyLane(layout)
    await mkdir(layout.tree, { recursive: true, mode: 0o700 })
    await copyInSandbox(workspace, entries, layout, host)
    await mkdir(`${layout.gitDir}/info`, { recursive: true })
    await privateGit(layout, host, ["init", "-q", "--template="], "create the private repository")
    await Bun.write(`${layout.gitDir}/info/attributes`, EXACT_ATTRIBUTES)
    // Every file above core.bigFileThreshold is streamed into one pack instead of a loose object each:
    // 5,000 small files become 2 files on disk (0.4 s instead of 3 s here). Only for this call: a
    // diff treats files above the threshold as binary.
    await privateGit(
      layout,
      host,
      ["-c", "core.bigFileThreshold=1", "add", "-A", "-f", "--", "."],
      "record the snapshot",
      { timeoutMs: 120_000 },
    )
    record.base = (await privateGit(layout, host, ["write-tree"], "record the snapshot")).trim()
    await savePatchRecord(paths.patchesDir, record)
    return { record, layout }
  } catch (error) {
    await removeWorktree(paths, record)
    throw error
  }
}

/** tar from the workspace (read-only) into the worktree (writable), in one sandbox; symlinks stay symlinks. */
async function copyInSandbox(workspace: string, entries: string[], layout: WorktreeLayout, host: HostContext) {
  if (!entries.length) return
  const plan = planSandbox(
    {
      profile: { kind: "runner", workspace: "writable", network: "disabled" },
      workspace: layout.dir,
      readOnly: [workspace],
      host,
    },
    hostFs,
  )
  // --verbatim-files-from: a listed name starting with "-" is a name, not an option.
  const script =
    'tar -C "$1" --null --verbatim-files-from --no-recursion --ignore-failed-read -T - -cf - | tar -C "$2" ' +
    "--no-same-owner -xpf -"
  const result = await runSandboxed(plan, ["sh", "-c", script, "sh", workspace, layout.tree], {
    timeoutMs: 300_000,
    maxOutputBytes: 64 * 1024,
    stdin: `${entries.join("\0")}\0`,
  })
  if (result.failure || result.exitCode !== 0)
    throw fail(
      "Server",
      `Could not copy ${workspace} into the isolated worktree: ` +
        `${result.failure?.detail ?? result.stderr.trim().slice(0, 400)}.`,
      'Run `opencode-mcp-orchestrator doctor`; retry with isolation "in_place" if it persists.',
    )
}

/**
 * The lane's files, not its directory: OpenCode's instance for `tree/` outlives them. patch_apply's
 * staging goes too (patch_discard rolled back any apply killed while writing before it gets here).
 */
const emptyLane = async (layout: WorktreeLayout) => {
  const staging = await stagingDirs(layout.dir)
  await Promise.all([layout.tree, layout.gitDir, ...staging].map((dir) => rm(dir, { recursive: true, force: true })))
}

/**
 * Removes a worktree's files and its registry entry and patch, then frees its lane (patch_discard; a
 * snapshot that failed half-way). A worktree made before lanes goes with its directory.
 */
export async function removeWorktree(
  paths: Pick<Paths, "worktreesDir" | "patchesDir">,
  record: Pick<PatchRecord, "id" | "layout">,
): Promise<void> {
  const lane = record.layout.dir.slice(paths.worktreesDir.length + 1)
  if (LANE_NAME.test(lane)) await emptyLane(record.layout)
  else await rm(record.layout.dir, { recursive: true, force: true })
  await rm(`${paths.patchesDir}/${record.id}.patch`, { force: true })
  await rm(`${paths.patchesDir}/${record.id}.json`, { force: true })
  await releaseLane(paths.patchesDir, lane, record.id)
}
