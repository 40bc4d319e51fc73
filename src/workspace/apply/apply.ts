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
import { fail } from "../../errors"
import {
  hostFs,
  planSandbox,
  repositoryPrefixes,
  runSandboxed,
  type HostContext,
  type SandboxPlan,
} from "../../sandbox"
import { selfStep } from "../../util/self"
import { autorunMessage, contentAutorun, namedAutorun, ruleAutorun } from "./apply-autorun"
import { readJournal, stagingDirs } from "./apply-staging"
import { doneFile, type StepAnswer, type StepRequest, type TreeState } from "../write-step"
import { autorunLinks } from "../snapshot"
import { findRepository, sandboxedGit, privateGit } from "../git"
import { riskyLinks, type EntryAt } from "./links"
import { hasControl, shownName } from "../names"
import type { PatchFile, PatchRecord } from "../patches"

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
/**
 * The files of a patch the autorun rules catch (hidden, root-level non-source, new executable, mode
 * change), each with its rule: what the worker's result named, said again when patch_apply writes
 * them. Not refused: the rules name what may act on its own; the named list refuses what does.
 */
export const ruledFiles = (record: PatchRecord, workspace: string, files: PatchFile[]) =>
  ruleAutorun(files, workspacePrefixes(record, workspace))

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

/** A list of paths for a message: the first ten, and how many more. */
function namesOf(paths: string[]): string {
  const shown = paths.slice(0, 10).map(shownName).join(", ")
  return paths.length > 10 ? `${shown} and ${paths.length - 10} more` : shown
}

/** Where a mixed tree stands, path by path, for a message. Pure. */
export function mixedReport(tree: TreeState): string {
  const parts = [
    tree.after.length ? `${namesOf(tree.after)} hold the patch` : "",
    tree.before.length ? `${namesOf(tree.before)} are as before it` : "",
    tree.missing.length ? `${namesOf(tree.missing)} are missing (neither side)` : "",
    tree.changed.length ? `${namesOf(tree.changed)} were changed since by someone else` : "",
  ]
  return parts.filter((part) => part !== "").join("; ")
}

export interface Applied {
  files: PatchFile[]
  /** Set when the files were found holding the patch whole rather than written by this call: how. */
  found?: string
}

/** Applies the patch entirely or not at all; the files written. */
export async function applyPatch(input: ApplyInput): Promise<Applied> {
  const files = await check(input)
  if (!files.length) return { files: [] }
  const { record, workspace, host } = input
  const earlier = await recoverKilled(record, workspace, host, "forward")
  if (earlier.outcome === "rolled-forward")
    return { files, found: `an earlier patch_apply of ${record.id} stopped while writing; it was completed now.` }
  if (earlier.outcome === "rolled-back" && earlier.kept.length)
    refuse(
      `an earlier patch_apply of ${record.id} was killed while writing; it was rolled back except for ` +
        `${earlier.kept.map(shownName).join(", ")}, changed since by someone else.`,
      "Check those files with git status and git diff; then call patch_apply again.",
    )
  if (earlier.outcome === "mixed")
    refuse(
      `an earlier patch_apply of ${record.id} stopped while writing and could be neither completed nor rolled ` +
        `back: ${mixedReport(earlier.tree)}.`,
      "Check those files with git status and git diff; restore or move aside what someone else changed, then call " +
        "patch_apply again to complete it, or patch_discard to roll it back.",
    )
  const dir = `${record.layout.dir}/apply-${randomBytes(4).toString("hex")}`
  // Kept when the files are left part-way, or where they stand is unknown (the step and the probe
  // after it both failed): its journal and copies are how the next call finishes the job.
  let keep = false
  let decided = false
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 })
    if ((await copyHashing(input.patchFile, `${dir}/patch`, record.base)) !== record.digest)
      throw fail(
        "Server",
        `The stored patch of ${record.id} does not match its digest: it was changed on disk.`,
        "Discard it (patch_discard) and run the worker again.",
      )
    const request = { workspace, run: dir, files }
    const answer = await runStep(request, host).catch(async (error: unknown) => {
      // The step died without an answer (killed, out of memory): once it had begun writing, the files say how far.
      if ((await readJournal(dir)).kind === "none") throw error
      const probe = await runStep({ ...request, mode: "probe" }, host)
      return { ok: false as const, refused: false, message: (error as Error).message, hint: "", tree: probe.tree }
    })
    decided = answer.ok || answer.tree !== undefined || answer.refused
    if (answer.ok && answer.written === 0 && answer.tree?.outcome === "rolled-forward")
      return { files, found: "the files already held the patch whole (an earlier apply whose answer was lost)." }
    if (answer.ok) return { files }
    if (answer.tree?.outcome === "rolled-forward")
      return { files, found: `every file was written, though the write step then failed: ${answer.message}` }
    if (!answer.refused && answer.tree?.outcome === "mixed") {
      keep = true
      throw fail(
        "Server",
        `patch_apply of ${record.id} stopped part-way and could not roll back: ${answer.message} Now ` +
          `${mixedReport(answer.tree)}.`,
        "Fix the cause (free space, permissions), then call patch_apply again to complete it from where it " +
          "stopped, or patch_discard to roll it back; doctor names it until then.",
      )
    }
    if (answer.refused && answer.tree)
      refuse(
        `${answer.message} Part of the patch is there already, with no record of the apply that wrote it: ` +
          `${mixedReport(answer.tree)}.`,
        "Put those files back as they were (git diff shows them) or finish the change by hand, then call " +
          "patch_apply again.",
      )
    if (answer.refused) refuse(answer.message, answer.hint)
    throw fail("Server", answer.message, answer.hint)
  } finally {
    const stopped = (await readJournal(dir)).kind !== "none" && !(await Bun.file(doneFile(dir)).exists())
    if (!keep && !(stopped && !decided)) await rm(dir, { recursive: true, force: true })
  }
}

export type Recovered =
  | { outcome: "none" | "rolled-back" | "rolled-forward"; kept: string[] }
  | { outcome: "mixed"; kept: string[]; tree: TreeState }

/**
 * Run directories left by a write step or server stopped mid-apply: no other apply of this patch can be
 * running (it would hold the same workspace's writer state), so any found is stale. One stopped while
 * writing (a journal of any kind, no `done`) is brought to one side in the sandbox, path by path from
 * what the workspace holds: `forward` (patch_apply) completes it from its staged copies, or else rolls
 * it back; `back` (patch_discard) rolls it back. A sound journal names its files; a damaged one, or one
 * from an earlier version with no checksum, is never trusted: the patch's record names them. Its run
 * directory stays while the tree is mixed (the next call tries again). `kept`: paths changed since by
 * someone else, left as they are. The caller holds the workspace's writer state.
 */
export async function recoverKilled(
  record: PatchRecord,
  workspace: string,
  host: HostContext,
  direction: "forward" | "back",
): Promise<Recovered> {
  let outcome: Recovered["outcome"] = "none"
  const kept = new Set<string>()
  for (const run of await stagingDirs(record.layout.dir)) {
    const journal = await readJournal(run)
    const stopped = journal.kind !== "none" && !(await Bun.file(doneFile(run)).exists())
    const ours = journal.kind !== "sound" || journal.journal.workspace === workspace
    if (stopped && ours) {
      const files = journal.kind === "sound" ? journal.journal.files : (record.files ?? [])
      const temps = journal.kind === "sound" ? journal.journal.temps : undefined
      const request: StepRequest = { workspace, run, files, temps }
      const tree = await bringToOneSide(record, request, host, direction)
      if (tree.outcome === "mixed") {
        // Killed again or stuck: the journal and its copies stay for the next call.
        for (const path of tree.changed) kept.add(path)
        return { outcome: "mixed", kept: [...kept], tree }
      }
      for (const path of tree.changed) kept.add(path)
      outcome = tree.outcome
    }
    // Only once the tree is on one side: a kill during it leaves the journal for the next process.
    await rm(run, { recursive: true, force: true })
  }
  return { outcome, kept: [...kept] }
}

/** Forward when asked and possible, else back; the tree as it stands afterwards. */
async function bringToOneSide(
  record: PatchRecord,
  request: StepRequest,
  host: HostContext,
  direction: "forward" | "back",
): Promise<TreeState> {
  const modes = direction === "forward" ? (["forward", "back"] as const) : (["back"] as const)
  let tree: TreeState | undefined
  for (const mode of modes) {
    const answer = await runStep({ ...request, mode }, host)
    if (!answer.ok)
      throw fail(
        "Server",
        `An earlier patch_apply of ${record.id} stopped while writing, and bringing it to one side failed: ` +
          `${answer.message}`,
        answer.hint,
      )
    tree = answer.tree
    // Someone else's change keeps a path where it is; the rest reached the side asked for.
    if (tree && isOnSide(tree, mode === "forward" ? "after" : "before"))
      return { ...tree, outcome: mode === "forward" ? "rolled-forward" : "rolled-back" }
  }
  if (!tree) throw fail("Server", `The write step gave no state for ${record.id}.`, "Run doctor, then retry.")
  return { ...tree, outcome: "mixed" }
}

/** Every path on `side` but those someone else changed (kept as they are, named). Pure. */
const isOnSide = (tree: TreeState, side: "before" | "after") =>
  tree.missing.length === 0 && (side === "after" ? tree.before.length === 0 : tree.after.length === 0)

/** The write step's sandbox: the workspace and the run directory writable, `programs` read-only, no network. */
export function stepSandbox(
  request: Pick<StepRequest, "workspace" | "run">,
  host: HostContext,
  programs: readonly string[],
): SandboxPlan {
  const profile = { kind: "runner", workspace: "writable", network: "disabled" } as const
  // The parent accepted this patch (allow_autorun for a marker): its write reaches the markers' folders.
  const plan = planSandbox(
    { profile, workspace: request.workspace, writable: [request.run], programs, host, markersWritable: true },
    hostFs,
  )
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
