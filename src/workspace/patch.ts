// Collecting an isolated worker's work as a patch: everything in its worktree is recorded in the
// private repository and diffed against the snapshot, as a binary-safe unified diff with full blob ids
// (adds, deletes, renames, mode changes, symlinks, binary files; names quoted as git quotes them). The
// diff is written to a file by git and read as bytes: a text file in a legacy encoding survives.
import { createHash } from "node:crypto"
import { rm } from "node:fs/promises"
import type { HostContext } from "../sandbox"
import { diskUse } from "./disk"
import { savePatchBytes, savePatchRecord, type PatchChange, type PatchFile, type PatchRecord } from "./patches"
import { privateGit } from "./worktree"

/** What a result carries of a patch; the whole diff stays on disk for patch_show. */
export const SUMMARY_MAX_BYTES = 2048

/** sha256 over the base snapshot id and the patch bytes, hex. */
export function patchDigest(base: string, bytes: Uint8Array): string {
  return createHash("sha256").update(base).update(bytes).digest("hex")
}

const CHANGES: Record<string, PatchChange> = { A: "added", D: "deleted", R: "renamed", M: "modified", T: "modified" }

/** `git diff --raw -z --full-index` and `--numstat -z` (same rename detection) → per-file entries. Pure. */
export function parseDiff(raw: string, numstat: string): PatchFile[] {
  const files: PatchFile[] = []
  const fields = raw.split("\0")
  for (let i = 0; i < fields.length; i++) {
    const head = fields[i]!
    if (!head.startsWith(":")) continue
    const [oldMode, newMode, oldOid, newOid, status] = head.slice(1).split(" ") as [string, string, string, string, string]
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

/** One line per file, cut to SUMMARY_MAX_BYTES with a count of what was left out. Pure. */
export function summarize(files: PatchFile[]): string {
  const added = files.reduce((sum, file) => sum + file.additions, 0)
  const removed = files.reduce((sum, file) => sum + file.deletions, 0)
  const head = `${files.length} file${files.length === 1 ? "" : "s"} changed, +${added} -${removed}`
  const lines = files.map((file) => {
    const facts = [file.change, file.binary ? "binary" : `+${file.additions} -${file.deletions}`]
    if (file.oldMode && file.newMode && file.oldMode !== file.newMode) facts.push(`${modeName(file.oldMode)} → ${modeName(file.newMode)}`)
    else if (file.newMode === "120000" || (!file.newMode && file.oldMode === "120000")) facts.push("symlink")
    return `${file.oldPath ? `${file.oldPath} → ` : ""}${file.path} (${facts.join(", ")})`
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
export async function collectPatch(record: PatchRecord, patchesDir: string, host: HostContext): Promise<PatchRecord> {
  const layout = record.layout
  const git = (args: string[], what = "collect the patch") => privateGit(layout, host, args, what, { timeoutMs: 120_000 })
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
  const after = (await git(["write-tree"])).trim()
  const diff = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "--full-index"]
  const output = `${layout.dir}/patch.tmp`
  await git([...diff, "--binary", `--output=${output}`, record.base, after])
  const bytes = await Bun.file(output).bytes()
  await rm(output, { force: true })
  const files = parseDiff(await git([...diff, "--raw", "--no-abbrev", "-z", record.base, after]), await git([...diff, "--numstat", "-z", record.base, after]))
  await savePatchBytes(patchesDir, record.id, bytes)
  Object.assign(record, {
    status: "ready",
    collectedAt: new Date().toISOString(),
    after,
    digest: patchDigest(record.base, bytes),
    files,
    summary: summarize(files),
    bytes: bytes.byteLength,
    // The diff's size says nothing of what the lane holds: a 13 MB snapshot behind a 6 KB patch.
    disk: diskUse(layout.dir),
    warnings: warnings.length ? warnings : undefined,
  })
  await savePatchRecord(patchesDir, record)
  return record
}

/** git writes a change between a symlink and a file as a deletion and an addition: two sections. */
const isTypeChange = (file: PatchFile) => file.oldMode !== undefined && file.newMode !== undefined && (file.oldMode === "120000") !== (file.newMode === "120000")

/** The diff text of one file of the patch (its one or two sections), or undefined when it has none. Pure. */
export function fileDiff(text: string, files: PatchFile[], index: number): string | undefined {
  const sections = fileSections(text)
  let at = 0
  for (let i = 0; i < index; i++) at += isTypeChange(files[i]!) ? 2 : 1
  const parts = sections.slice(at, at + (files[index] && isTypeChange(files[index]!) ? 2 : 1))
  return parts.length ? parts.join("") : undefined
}

/** The patch split into one section per file (`diff --git` headers), in the order of `files`. Pure. */
export function fileSections(text: string): string[] {
  // Content lines of a unified diff start with " ", "+" or "-", and base85 lines with a length letter:
  // only a file header starts with "diff --git ".
  const starts: number[] = text.startsWith("diff --git ") ? [0] : []
  for (let at = text.indexOf("\ndiff --git "); at !== -1; at = text.indexOf("\ndiff --git ", at + 1)) starts.push(at + 1)
  return starts.map((start, index) => text.slice(start, starts[index + 1] ?? text.length))
}
