// patch_apply: a stored patch onto the user's working tree, all or nothing. Here, on the host, only
// what needs no write: the digest (the caller saw exactly this patch, re-hashed from the stored bytes),
// the repository (the one the snapshot was taken of), HEAD (not moved since), every path (relative,
// no Git metadata, no control character), every link (inside the repository unless the caller allows
// links), and no file that other programs run on their own unless the caller says so. Then the write
// step (apply-step.ts) runs inside bwrap with only the workspace and this apply's run directory
// writable: it checks every target, has git apply the patch to a staging copy, and moves the results
// into place, so a symlink swapped into the workspace meanwhile meets the mount namespace, not a path
// check. No commit, stage, reset or stash: the index and HEAD are never touched.
// Why a sandbox and not directory-fd-relative calls: Bun (like Node) offers no openat/openat2 with
// RESOLVE_BENEATH, so no-follow resolution would need FFI into libc; the mount namespace comes from the
// same audited plan every agent command gets, and costs about 80 ms an apply (bwrap and one start of
// this program).
import { createHash, randomBytes } from "node:crypto"
import { readlinkSync } from "node:fs"
import { mkdir, rm } from "node:fs/promises"
import { relative } from "node:path"
import { fail } from "../errors"
import { hostFs, planSandbox, repositoryPrefixes, runSandboxed, type HostContext, type SandboxPlan } from "../sandbox"
import { selfStep } from "../util/self"
import { autorunMessage, contentAutorun, namedAutorun } from "./apply-autorun"
import { readJournal, stagingDirs } from "./apply-staging"
import { doneFile, type StepAnswer, type StepRequest } from "./apply-step"
import { autorunLinks } from "./autorun"
import { findRepository, sandboxedGit } from "./git"
import { riskyLinks, type EntryAt } from "./links"
import { hasControl, shownName } from "./names"
import type { PatchFile, PatchRecord } from "./patches"
import { privateGit } from "./private-git"

export { blobId, entryOf } from "./apply-targets"

function refuse(message: string, hint: string): never {
  throw fail("Usage", `patch_apply refused, nothing was written: ${message}`, hint)
}

/** A patch path may not climb out, be absolute, name Git metadata or hold a control character. Pure. */
export function unsafePath(path: string): string | undefined {
  if (path.startsWith("/") || path === "") return "it is not a relative path"
  const parts = path.split("/")
  if (parts.some((part) => part === ".." || part === "." || part === "")) return "it is not a plain relative path"
  if (parts.some((part) => part.toLowerCase() === ".git")) return "it is Git metadata"
  if (path.includes("\uFFFD")) return "its name is not valid UTF-8"
  if (hasControl(path)) return "its name holds a control character (a newline, a tab, an escape)"
  return undefined
}

export interface ApplyInput {
  record: PatchRecord
  /** The stored patch (patches.ts patchFile): streamed, never read whole. */
  patchFile: string
  digest: string
  /** The canonical, admitted target directory. */
  workspace: string
  host: HostContext
  /** Write files other programs run on their own (hooks, CI workflows, project config) too. */
  allowAutorun?: boolean
  /** Write links that point outside the repository or replace a file or directory too. */
  allowLinks?: boolean
}

/** The repository as it is, for the link rule: lstat only, never below a symlink (the resolver stops at each). */
const entryAt =
  (root: string): EntryAt =>
  (rel) => {
    const kind = hostFs.lstat(`${root}/${rel}`)
    if (kind === undefined) return undefined
    if (kind !== "symlink") return { kind }
    try {
      return { kind: "link", target: readlinkSync(`${root}/${rel}`, "utf8") }
    } catch {
      // Gone since the lstat: an empty target, which no link rule admits.
      return { kind: "link", target: "" }
    }
  }

/**
 * Where the workspace lies in the repository the snapshot was taken of ("" at its root), and in every
 * repository around that one: a worker's `git init .github` makes `.github` a root, and `workflows/` in
 * it still runs as the outer repository's CI.
 */
const workspacePrefixes = (record: PatchRecord, workspace: string) => [
  ...new Set([relative(record.source.root, record.source.workspace), ...repositoryPrefixes(workspace, hostFs)]),
]
const AUTORUN_HINT =
  "Read them with patch_show (file); to write them anyway, call patch_apply again with allow_autorun: true."

/** Every refusal that needs no write; returns the files to write. */
async function check(input: ApplyInput): Promise<PatchFile[]> {
  const { record, workspace, host } = input
  if (input.digest !== record.digest)
    refuse(
      `the digest does not match patch ${record.id}.`,
      "Call patch_show (or task_result) again and pass the digest it gives: the patch you reviewed is not this one.",
    )
  const repository = findRepository(workspace, host)
  if (
    !repository ||
    repository.root !== record.source.root ||
    repository.gitDir !== record.source.gitDir ||
    workspace !== record.source.workspace
  )
    refuse(
      `${workspace} is not the workspace the patch was taken from (${record.source.workspace}, repository ` +
        `${record.source.gitDir}).`,
      "Apply it in the workspace the worker was given, or apply the patch text yourself (patch_show).",
    )
  const head =
    (await sandboxedGit(repository, host, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]))?.stdout.trim() || undefined
  if (head !== record.source.head)
    refuse(
      `HEAD moved since the snapshot (${record.source.head?.slice(0, 12) ?? "no commit"} → ` +
        `${head?.slice(0, 12) ?? "no commit"}).`,
      "Review the patch against the new HEAD (patch_show) and apply it by hand, or run the worker again.",
    )
  const files = record.files ?? []
  for (const path of files.flatMap((file) => [file.path, file.oldPath]).filter((p): p is string => p !== undefined)) {
    const unsafe = unsafePath(path)
    if (unsafe)
      refuse(
        `the patch names ${shownName(path)}: ${unsafe}.`,
        "Read it with patch_show; apply the change by hand under another name, or discard the patch (patch_discard).",
      )
  }
  if (!input.allowAutorun) {
    const prefix = workspacePrefixes(record, workspace)
    const named = namedAutorun(
      files,
      prefix,
      await autorunLinks(workspace, prefix),
      (path) => hostFs.lstat(`${workspace}/${path}`) === "dir",
    )
    if (named.length) refuse(autorunMessage(named), AUTORUN_HINT)
    // Manifests by content (an install script added): old and new text from the private repository's
    // blobs, which the snapshot and the patch collection stored; never read from the workspace.
    const blob = (oid: string, mode: string | undefined) =>
      privateGit(record.layout, host, ["cat-file", "blob", oid], "read a patched manifest").then((text) =>
        mode === "120000" ? `link:${text}` : text,
      )
    const manifests = await contentAutorun(files, blob, prefix)
    if (manifests.length) refuse(autorunMessage(manifests), AUTORUN_HINT)
  }
  const base = workspace === repository.root ? "" : workspace.slice(repository.root.length + 1)
  const links = input.allowLinks ? [] : riskyLinks(files, base, entryAt(repository.root))
  if (links.length)
    refuse(
      `the patch writes links that need allow_links: ${links
        .slice(0, 5)
        .map((link) => `${shownName(link.path)} → ${shownName(link.target)} (${link.why})`)
        .join("; ")}${links.length > 5 ? ` and ${links.length - 5} more` : ""}.`,
      "Read them with patch_show; to write them anyway, call patch_apply again with allow_links: true.",
    )
  return files
}

/** Copies the stored patch into the run directory chunk by chunk, and returns its digest (patch.ts patchDigest). */
async function copyHashing(from: string, to: string, base: string): Promise<string> {
  const hash = createHash("sha256").update(base)
  const sink = Bun.file(to).writer()
  for await (const chunk of Bun.file(from).stream()) {
    hash.update(chunk)
    sink.write(chunk)
  }
  await sink.end()
  return hash.digest("hex")
}

/** Applies the patch entirely or not at all; the files written. */
export async function applyPatch(input: ApplyInput): Promise<PatchFile[]> {
  const files = await check(input)
  if (!files.length) return []
  const { record, workspace, host } = input
  const kept = await recoverKilled(record, workspace, host)
  if (kept.length)
    refuse(
      `an earlier patch_apply of ${record.id} was killed while writing; it was rolled back except for ` +
        `${kept.map(shownName).join(", ")}, changed since by someone else.`,
      "Check those files with git status and git diff; then call patch_apply again.",
    )
  const dir = `${record.layout.dir}/apply-${randomBytes(4).toString("hex")}`
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 })
    if ((await copyHashing(input.patchFile, `${dir}/patch`, record.base)) !== record.digest)
      throw fail(
        "Server",
        `The stored patch of ${record.id} does not match its digest: it was changed on disk.`,
        "Discard it (patch_discard) and run the worker again.",
      )
    const answer = await runStep({ workspace, run: dir, files }, host)
    if (answer.ok) return files
    if (answer.refused) refuse(answer.message, answer.hint)
    throw fail("Server", answer.message, answer.hint)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * A run directory left by a write step or server killed mid-apply: no other apply of this patch can be
 * running (it would hold the same workspace's writer state), so any found is stale. One killed while
 * writing (a journal, no `done`) is rolled back first, in the sandbox, undoing only its own writes and
 * removing its temporaries. Returns the paths kept as someone else changed them since. The caller
 * holds the workspace's writer state (patch_apply, patch_discard).
 */
export async function recoverKilled(record: PatchRecord, workspace: string, host: HostContext): Promise<string[]> {
  const kept: string[] = []
  for (const run of await stagingDirs(record.layout.dir)) {
    const journal = await readJournal(run)
    const killed = journal?.workspace === workspace && !(await Bun.file(doneFile(run)).exists())
    const answer = killed
      ? await runStep({ workspace, run, files: journal.files, temps: journal.temps, recover: true }, host)
      : undefined
    if (answer && !answer.ok)
      throw fail(
        "Server",
        `An earlier patch_apply of ${record.id} was killed while writing, and rolling it back failed: ` +
          `${answer.message}`,
        answer.hint,
      )
    // Only once the rollback is done: a kill during it leaves the journal for the next process.
    await rm(run, { recursive: true, force: true })
    kept.push(...(answer?.kept ?? []))
  }
  return kept
}

/** The write step's sandbox: the workspace and the run directory writable, `programs` read-only, no network. */
export function stepSandbox(
  request: Pick<StepRequest, "workspace" | "run">,
  host: HostContext,
  programs: readonly string[],
): SandboxPlan {
  const profile = { kind: "runner", workspace: "writable", network: "disabled" } as const
  const plan = planSandbox({ profile, workspace: request.workspace, writable: [request.run], programs, host }, hostFs)
  // The step starts in its own directory, so nothing the workspace holds (a bunfig.toml, a .env) is read by the
  // runtime.
  return { ...plan, cwd: request.run }
}

async function runStep(request: StepRequest, host: HostContext): Promise<StepAnswer> {
  const self = selfStep()
  const result = await runSandboxed(stepSandbox(request, host, self.programs), self.command, {
    timeoutMs: 600_000,
    maxOutputBytes: 64 * 1024,
    stdin: JSON.stringify(request),
  })
  const line = result.stdout.trim().split("\n").at(-1) ?? ""
  try {
    if (!result.failure && result.exitCode === 0) return JSON.parse(line) as StepAnswer
  } catch {
    // Not the step's JSON answer: reported as the step's failure below.
  }
  throw fail(
    "Server",
    `patch_apply's write step could not run in the sandbox: ` +
      `${result.failure?.detail ?? (result.stderr.trim().slice(0, 400) || `exit ${result.exitCode}`)}.`,
    "Nothing was written unless the message says otherwise; run `opencode-mcp-orchestrator doctor`, then retry.",
  )
}
