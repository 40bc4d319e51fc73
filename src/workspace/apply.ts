// patch_apply: a stored patch onto the user's working tree, all or nothing. Every check runs before
// the first write: the digest (the caller saw exactly this patch), the repository (the one snapshot
// was taken of), HEAD (not moved since), every path (relative, no Git metadata, no symlinked parent),
// every target (holding exactly what the snapshot held, by blob id and mode), and no file that other
// programs run on their own unless the caller says so. Then git applies the
// patch in a sandbox to a staging copy of the targets (so a hunk that does not apply fails there), the
// result is checked against the patch's blob ids, and only then are the files moved into place. No
// commit, stage, reset or stash: the index and HEAD are never touched.
import { createHash, randomBytes } from "node:crypto"
import { chmod, copyFile, lstat, mkdir, readdir, readFile, readlink, rename, rm, rmdir, symlink, writeFile } from "node:fs/promises"
import { dirname, relative } from "node:path"
import { fail } from "../errors"
import type { HostContext } from "../sandbox"
import { autorunMessage, contentAutorun, namedAutorun } from "./apply-autorun"
import { autorunLinks } from "./autorun"
import { findRepository, sandboxedGit } from "./git"
import type { PatchFile, PatchRecord } from "./patches"
import { privateGit } from "./worktree"

/** A Git blob id (SHA-1, as the private repository uses) of bytes. */
export function blobId(bytes: Uint8Array | string): string {
  const data = typeof bytes === "string" ? Buffer.from(bytes) : bytes
  return createHash("sha1").update(`blob ${data.byteLength}\0`).update(data).digest("hex")
}

/** What is at a path, as git would record it: mode and blob id, or undefined when nothing is. */
export async function entryOf(path: string): Promise<{ mode: string; oid: string } | undefined> {
  const info = await lstat(path).catch(() => undefined) // absent is an answer here
  if (!info) return undefined
  if (info.isSymbolicLink()) return { mode: "120000", oid: blobId(await readlink(path)) }
  if (info.isDirectory()) return { mode: "directory", oid: "" }
  if (!info.isFile()) return { mode: "other", oid: "" }
  return { mode: info.mode & 0o100 ? "100755" : "100644", oid: blobId(await readFile(path)) }
}

function refuse(message: string, hint: string): never {
  throw fail("Usage", `patch_apply refused, nothing was written: ${message}`, hint)
}

/** A patch path may not climb out, be absolute, or name Git metadata. Pure. */
export function unsafePath(path: string): string | undefined {
  if (path.startsWith("/") || path === "") return "it is not a relative path"
  const parts = path.split("/")
  if (parts.some((part) => part === ".." || part === "." || part === "")) return "it is not a plain relative path"
  if (parts.some((part) => part.toLowerCase() === ".git")) return "it is Git metadata"
  if (path.includes("\uFFFD")) return "its name is not valid UTF-8"
  return undefined
}

/**
 * The first directory between `root` and `path` that is a symlink or not a directory, if any. A file
 * or symlink the patch removes (`removed`) is gone before anything is written: below it is new ground.
 */
async function badParent(root: string, path: string, removed: Set<string>): Promise<string | undefined> {
  const parts = path.split("/").slice(0, -1)
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join("/")
    const info = await lstat(`${root}/${dir}`).catch(() => undefined) // a missing directory is created on apply
    if (!info || (!info.isDirectory() && removed.has(dir))) return undefined
    if (info.isSymbolicLink()) return `${dir} is a symlink`
    if (!info.isDirectory()) return `${dir} is not a directory`
  }
  return undefined
}

/** True when `dir` holds nothing but files the patch removes (it is pruned before a file takes its place). */
async function emptiedBy(root: string, dir: string, removed: Set<string>): Promise<boolean> {
  const entries = await readdir(`${root}/${dir}`, { recursive: true })
  for (const entry of entries) {
    const info = await lstat(`${root}/${dir}/${entry}`)
    if (!info.isDirectory() && !removed.has(`${dir}/${entry}`)) return false
  }
  return true
}

/** Where the workspace lies in the repository the snapshot was taken of ("" at its root). */
const workspacePrefix = (record: PatchRecord) => relative(record.source.root, record.source.workspace)
const AUTORUN_HINT = "Read them with patch_show (file); to write them anyway, call patch_apply again with allow_autorun: true."

export interface ApplyInput {
  record: PatchRecord
  bytes: Uint8Array
  digest: string
  /** The canonical, admitted target directory. */
  workspace: string
  host: HostContext
  /** Write files other programs run on their own (hooks, CI workflows, project config) too. */
  allowAutorun?: boolean
}

/** Paths the patch deletes or renames away: gone before anything is written. */
const removedPaths = (files: PatchFile[]) => new Set(files.filter((file) => file.oldPath || !file.newOid).map((file) => file.oldPath ?? file.path))

/** Every refusal, before anything is written; returns the files to write. */
async function check(input: ApplyInput): Promise<PatchFile[]> {
  const { record, workspace, host } = input
  if (input.digest !== record.digest)
    refuse(`the digest does not match patch ${record.id}.`, "Call patch_show (or task_result) again and pass the digest it gives: the patch you reviewed is not this one.")
  const repository = findRepository(workspace, host)
  if (!repository || repository.root !== record.source.root || repository.gitDir !== record.source.gitDir || workspace !== record.source.workspace)
    refuse(
      `${workspace} is not the workspace the patch was taken from (${record.source.workspace}, repository ${record.source.gitDir}).`,
      "Apply it in the workspace the worker was given, or apply the patch text yourself (patch_show).",
    )
  const head = (await sandboxedGit(repository, host, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]))?.stdout.trim() || undefined
  if (head !== record.source.head)
    refuse(
      `HEAD moved since the snapshot (${record.source.head?.slice(0, 12) ?? "no commit"} → ${head?.slice(0, 12) ?? "no commit"}).`,
      "Review the patch against the new HEAD (patch_show) and apply it by hand, or run the worker again.",
    )
  const files = record.files ?? []
  const autorun = namedAutorun(files, workspacePrefix(record), await autorunLinks(workspace, workspacePrefix(record)))
  if (autorun.length && !input.allowAutorun) refuse(autorunMessage(autorun), AUTORUN_HINT)
  const removed = removedPaths(files)
  for (const file of files) {
    for (const path of [file.path, file.oldPath].filter((p): p is string => p !== undefined)) {
      const unsafe = unsafePath(path)
      if (unsafe) refuse(`the patch names ${JSON.stringify(path)}: ${unsafe}.`, "Discard this patch (patch_discard).")
      const parent = await badParent(workspace, path, removed)
      if (parent) refuse(`a parent directory of ${path} is not a plain directory: ${parent}.`, "Restore that directory (a symlink is never followed), then retry.")
    }
    const source = file.oldPath ?? file.path
    const now = await entryOf(`${workspace}/${source}`)
    if (file.oldOid) {
      if (!now || now.oid !== file.oldOid || now.mode !== file.oldMode)
        refuse(`${source} changed since the snapshot.`, "Review the patch against the file as it is now (patch_show) and apply the change by hand, or run the worker again.")
    } else if (now && !(now.mode === "directory" && (await emptiedBy(workspace, source, removed))))
      refuse(`${source} exists, but the patch creates it.`, "Move that file aside, or apply the change by hand.")
    const target = file.oldPath && file.oldPath !== file.path ? await entryOf(`${workspace}/${file.path}`) : undefined
    if (target && !removed.has(file.path) && !(target.mode === "directory" && (await emptiedBy(workspace, file.path, removed))))
      refuse(`${file.path} exists, but the patch renames ${file.oldPath} onto it.`, "Move that file aside, or apply the change by hand.")
  }
  return files
}

async function copyEntry(from: string, to: string) {
  await mkdir(dirname(to), { recursive: true })
  const info = await lstat(from)
  if (info.isSymbolicLink()) await symlink(await readlink(from), to)
  else {
    await copyFile(from, to)
    await chmod(to, info.mode & 0o777)
  }
}

/** Moves `from` (a staged file or symlink) over `to` in one rename. */
async function place(from: string, to: string) {
  await mkdir(dirname(to), { recursive: true })
  const temp = `${to}.oc-orch-${randomBytes(4).toString("hex")}`
  await copyEntry(from, temp)
  await rename(temp, to).catch(async (error: unknown) => {
    await rm(temp, { force: true })
    throw error
  })
}

/** Removes now-empty directories above a deleted file, up to (not including) the workspace, as git does. */
async function pruneEmpty(workspace: string, path: string) {
  for (let dir = dirname(path); dir !== "." && dir !== ""; dir = dirname(dir)) {
    // A directory that still holds something stays: rmdir refuses, and that ends the walk.
    const removed = await rmdir(`${workspace}/${dir}`).then(
      () => true,
      () => false,
    )
    if (!removed) return
  }
}

/** Applies the patch entirely or not at all; the files written. */
export async function applyPatch(input: ApplyInput): Promise<PatchFile[]> {
  const files = await check(input)
  if (!files.length) return []
  const { record, workspace, host } = input
  const layout = record.layout
  const run = `${layout.dir}/apply-${randomBytes(4).toString("hex")}`
  const stage = { ...layout, tree: `${run}/tree` }
  const before = `${run}/before`
  try {
    // The targets as they are (checked equal to the snapshot), twice: one copy to patch, one to roll back to.
    await mkdir(stage.tree, { recursive: true })
    for (const file of files) {
      const source = file.oldPath ?? file.path
      if (!file.oldOid) continue
      await copyEntry(`${workspace}/${source}`, `${stage.tree}/${source}`)
      await copyEntry(`${workspace}/${source}`, `${before}/${source}`)
    }
    await writeFile(`${run}/patch`, input.bytes)
    await privateGit(stage, host, ["apply", "--binary", "--whitespace=nowarn", "-p1", `${run}/patch`], "apply the patch to a staging copy").catch((error: Error) =>
      refuse(`a hunk does not apply: ${error.message}`, "Review the patch (patch_show) and apply the change by hand, or run the worker again."),
    )
    for (const file of files) {
      // A directory is no Git entry: a deleted file's name may now hold the directory of an added one.
      const staged = await entryOf(`${stage.tree}/${file.path}`).then((entry) => (entry?.mode === "directory" ? undefined : entry))
      const expected = file.newOid ? { mode: file.newMode, oid: file.newOid } : undefined
      if (staged?.oid !== expected?.oid || staged?.mode !== expected?.mode)
        refuse(`the staged result of ${file.path} is not what the patch records.`, "Discard this patch (patch_discard) and run the worker again.")
    }
    const manifests = input.allowAutorun ? [] : await contentAutorun(files, before, stage.tree, workspacePrefix(record))
    if (manifests.length) refuse(autorunMessage(manifests), AUTORUN_HINT)
    // Every check passed: deletions (and rename sources) first, then the new content.
    const done: Array<{ path: string; existed: boolean }> = []
    try {
      for (const file of files) {
        const source = file.oldPath ?? file.path
        if (file.oldPath || !file.newOid) {
          done.push({ path: source, existed: true })
          await rm(`${workspace}/${source}`)
        }
      }
      // A directory emptied by the deletions may be where a new file goes.
      for (const path of removedPaths(files)) await pruneEmpty(workspace, path)
      for (const file of files) {
        if (!file.newOid) continue
        done.push({ path: file.path, existed: !file.oldPath && file.oldOid !== undefined })
        await place(`${stage.tree}/${file.path}`, `${workspace}/${file.path}`)
      }
    } catch (error) {
      // Put back what was there (from the copy taken before), remove what was new with the directories made for it.
      for (const step of done.reverse()) {
        await rm(`${workspace}/${step.path}`, { force: true })
        // A rollback that cannot restore one file still restores the others; the error below says what failed.
        if (step.existed) await place(`${before}/${step.path}`, `${workspace}/${step.path}`).catch(() => undefined)
        else await pruneEmpty(workspace, step.path)
      }
      throw fail("Server", `patch_apply failed while writing and was rolled back: ${(error as Error).message}.`, "Check the permissions and free space of the workspace, then retry.")
    }
    return files
  } finally {
    await rm(run, { recursive: true, force: true })
  }
}
