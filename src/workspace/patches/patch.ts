// Collecting an isolated worker's work as a patch: everything in its worktree is recorded in the
// private repository and diffed against the snapshot, as a binary-safe unified diff with full blob ids
// (adds, deletes, renames, mode changes, symlinks, binary files; names quoted as git quotes them). The
// diff is written to a file by git and streamed from there (hashed and copied chunk by chunk, never
// read whole): a text file in a legacy encoding survives, and a large patch costs no memory. A patch
// larger than maxPatchBytes is not stored: the worktree stays for the parent to inspect or discard.
import { createHash } from "node:crypto"
import { readlinkSync } from "node:fs"
import { rm, stat } from "node:fs/promises"
import { PATCH_BYTES_BOUNDS } from "../../config/schema"
import { fail } from "../../errors"
import type { HostContext } from "../../sandbox"
import { blobId } from "../git-objects"
import { diskUse } from "../disk"
import { shownName } from "../names"
import type { ChangeKind } from "../snapshot"
import { savePatchRecord, storePatchFile, type PatchFile, type PatchRecord } from "./patches"
import { privateGit } from "../git"
import { outOfScope } from "../scope"

/** What a result carries of a patch; the whole diff stays on disk for patch_show. */
const SUMMARY_MAX_BYTES = 2048

/** sha256 over the base snapshot id and the patch bytes, hex. */
export function patchDigest(base: string, bytes: Uint8Array): string {
  return createHash("sha256").update(base).update(bytes).digest("hex")
}

const CHANGES: Record<string, ChangeKind> = { A: "added", D: "deleted", R: "renamed", M: "modified", T: "modified" }

/** `git diff --raw -z --full-index` and `--numstat -z` (same rename detection) → per-file entries. Pure. */
function parseDiff(raw: string, numstat: string): PatchFile[] {
  const files: PatchFile[] = []
  const fields = raw.split("\0")
  for (let i = 0; i < fields.length; i++) {
    const head = fields[i]!
    if (!head.startsWith(":")) continue
    const [oldMode, newMode, oldOid, newOid, status] = head.slice(1).split(" ") as [
      string,
      string,
      string,
      string,
      string,
    ]
    const letter = status[0]!
    const renamed = letter === "R" || letter === "C"
    const first = fields[++i]!
    const second = renamed ? fields[++i]! : undefined
    const absentMode = (mode: string) => mode === "000000"
    files.push({
      path: second ?? first,
      ...(renamed ? { oldPath: first } : {}),
      change: letter === "C" ? "added" : (CHANGES[letter] ?? "modified"),
      additions: 0,
      deletions: 0,
      binary: false,
      ...(absentMode(oldMode) || letter === "C" ? {} : { oldMode, oldOid }),
      ...(absentMode(newMode) ? {} : { newMode, newOid }),
    })
  }
  const stats = numstat.split("\0")
  let index = 0
  for (let i = 0; i < stats.length && index < files.length; i++) {
    const line = stats[i]!
    if (!line) continue
    const [additions, deletions, path] = line.split("\t") as [string, string, string]
    // A rename's paths follow in their own fields when the path column is empty.
    if (path === "") i += 2
    const file = files[index++]!
    file.binary = additions === "-"
    file.additions = file.binary ? 0 : Number(additions)
    file.deletions = file.binary ? 0 : Number(deletions)
  }
  return files
}

const modeName = (mode?: string) => (mode === "120000" ? "symlink" : mode === "100755" ? "executable" : "file")

/** The link's target, escaped like a name, so a reviewer sees where every link goes. */
const linkFact = (file: PatchFile) =>
  `→ ${file.linkTarget === undefined ? "(target not recorded)" : shownName(file.linkTarget)}`

/** One line per file, cut to SUMMARY_MAX_BYTES with a count of what was left out. Pure. */
export function summarize(files: PatchFile[]): string {
  const added = files.reduce((sum, file) => sum + file.additions, 0)
  const removed = files.reduce((sum, file) => sum + file.deletions, 0)
  const head = `${files.length} file${files.length === 1 ? "" : "s"} changed, +${added} -${removed}`
  const lines = files.map((file) => {
    const facts = [file.change, file.binary ? "binary" : `+${file.additions} -${file.deletions}`]
    if (file.oldMode && file.newMode && file.oldMode !== file.newMode)
      facts.push(`${modeName(file.oldMode)} → ${modeName(file.newMode)}`)
    else if (file.newMode === "120000" || (!file.newMode && file.oldMode === "120000")) facts.push("symlink")
    if (file.newMode === "120000") facts.push(linkFact(file))
    return `${file.oldPath ? `${shownName(file.oldPath)} → ` : ""}${shownName(file.path)} (${facts.join(", ")})`
  })
  const out = [head]
  let size = Buffer.byteLength(head)
  for (const [index, line] of lines.entries()) {
    const more = `… and ${lines.length - index} more (patch_show lists them)`
    if (size + Buffer.byteLength(line) + 1 + Buffer.byteLength(more) + 1 > SUMMARY_MAX_BYTES) {
      out.push(more)
      break
    }
    out.push(line)
    size += Buffer.byteLength(line) + 1
  }
  return out.join("\n")
}

/**
 * Records the worktree's state and diffs it against the snapshot; stores the patch and completes the
 * record. Files the worktree's ignore rules exclude (build output) are not part of it; an embedded
 * repository is left out with a warning.
 */
/** Streams a file through sha256 after `base`: patchDigest without holding the bytes. */
async function fileDigest(base: string, path: string): Promise<string> {
  const hash = createHash("sha256").update(base)
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk)
  return hash.digest("hex")
}

export async function collectPatch(
  record: PatchRecord,
  patchesDir: string,
  host: HostContext,
  maxPatchBytes = PATCH_BYTES_BOUNDS.fallback,
  scope?: readonly string[],
): Promise<PatchRecord> {
  const layout = record.layout
  const git = (args: string[], what = "collect the patch") =>
    privateGit(layout, host, args, what, { timeoutMs: 120_000 })
  const warnings: string[] = []
  await git(["add", "-A", "--", "."])
  const embedded = (await git(["ls-files", "-z", "-s"]))
    .split("\0")
    .filter((entry) => entry.startsWith("160000 "))
    .map((entry) => entry.slice(entry.indexOf("\t") + 1))
  for (const path of embedded) {
    await git(["rm", "-q", "--cached", "--", path])
    warnings.push(`The worker created a nested Git repository at ${path}; it is not part of the patch.`)
  }
  const outside = scope ? await leaveOutOfScope(git, record.base, scope) : undefined
  const after = (await git(["write-tree"])).trim()
  const diff = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "--full-index"]
  const output = `${layout.dir}/patch.tmp`
  try {
    await git([...diff, "--binary", `--output=${output}`, record.base, after])
    const size = (await stat(output)).size
    if (size > maxPatchBytes) {
      record.refused = `the worker's changes make a ${size}-byte patch, more than maxPatchBytes (${maxPatchBytes}).`
      await savePatchRecord(patchesDir, record)
      throw fail(
        "Usage",
        `The patch was not stored: ${record.refused}`,
        `Look at what the worker wrote in its worktree ${record.layout.tree} (generated or vendored files?); ` +
          `patch_discard (patch_id "${record.id}") removes it, or raise maxPatchBytes in config.json and run the ` +
          `worker again.`,
        { oversize: true },
      )
    }
    const files = parseDiff(
      await git([...diff, "--raw", "--no-abbrev", "-z", record.base, after]),
      await git([...diff, "--numstat", "-z", record.base, after]),
    )
    readLinkTargets(layout.tree, files)
    const digest = await fileDigest(record.base, output)
    await storePatchFile(patchesDir, record.id, output)
    Object.assign(record, {
      status: "ready",
      collectedAt: new Date().toISOString(),
      after,
      digest,
      files,
      summary: summarize(files),
      bytes: size,
      // The diff's size says nothing of what the lane holds: a 13 MB snapshot behind a 6 KB patch.
      disk: diskUse(layout.dir),
      refused: undefined,
      outOfScope: outside?.length ? outside : undefined,
      warnings: warnings.length ? warnings : undefined,
    })
    await savePatchRecord(patchesDir, record)
    return record
  } finally {
    await rm(output, { force: true })
  }
}

/** Paths per `git reset` call: well under the kernel's argument limit for any path length. */
const RESET_BATCH = 200

/**
 * A scoped worker's changes outside its scope, set back to the snapshot in the index (not the worktree),
 * so the patch leaves them out; the paths, as git names them (a rename's both sides count).
 */
async function leaveOutOfScope(
  git: (args: string[]) => Promise<string>,
  base: string,
  scope: readonly string[],
): Promise<string[]> {
  const tree = (await git(["write-tree"])).trim()
  const changed = (await git(["diff", "--no-renames", "--name-only", "-z", base, tree])).split("\0").filter(Boolean)
  const outside = outOfScope(scope, changed)
  for (let at = 0; at < outside.length; at += RESET_BATCH) {
    const paths = outside.slice(at, at + RESET_BATCH).map((path) => `:(literal)${path}`)
    await git(["reset", "-q", base, "--", ...paths])
  }
  return outside
}

/**
 * Every new symlink's target, read from the worktree and kept only when it is the blob the patch
 * records (so what was read is what patch_apply writes); one that is not stays unrecorded, and
 * patch_apply then refuses the link without allow_links.
 */
function readLinkTargets(tree: string, files: PatchFile[]) {
  for (const file of files.filter((f) => f.newMode === "120000" && f.newOid)) {
    let target: string | undefined
    try {
      target = readlinkSync(`${tree}/${file.path}`, "utf8")
    } catch {} // gone or not a link any more: unrecorded
    if (target !== undefined && blobId(target) === file.newOid) file.linkTarget = target
  }
}

/** git writes a change between a symlink and a file as a deletion and an addition: two sections. */
const isTypeChange = (file: PatchFile) =>
  file.oldMode !== undefined &&
  file.newMode !== undefined &&
  (file.oldMode === "120000") !== (file.newMode === "120000")

/**
 * Where one file's one or two sections are in a patch of `size` bytes whose sections start at `starts`; undefined when
 * it has none. Pure.
 */
export function fileRange(
  starts: number[],
  size: number,
  files: PatchFile[],
  index: number,
): { start: number; end: number } | undefined {
  if (index < 0 || index >= files.length) return undefined
  let at = 0
  for (let i = 0; i < index; i++) at += isTypeChange(files[i]!) ? 2 : 1
  const count = isTypeChange(files[index]!) ? 2 : 1
  if (at >= starts.length) return undefined
  return { start: starts[at]!, end: starts[at + count] ?? size }
}
