// The part of patch_apply that touches the user's files, run inside bwrap (apply.ts starts it) with
// only the workspace and this apply's run directory writable. Every path here is followed by the
// kernel of that mount namespace: a directory swapped for a symlink to HOME while this runs resolves
// to a read-only or empty place in the sandbox, never to the host's HOME. The checks (apply-targets.ts)
// are for good errors; the confinement does not depend on them.
// It reads one JSON request on stdin and prints one JSON answer line; it imports only node: builtins
// the process wrapper and the name escaper, so from source it runs with nothing but src/ mounted.
import { chmod, copyFile, lstat, mkdir, readlink, rename, rm, rmdir, symlink } from "node:fs/promises"
import { dirname } from "node:path"
import { run } from "../../util/process"
import { finishJournal, removeTemps, tempFor, tempsOf, writeJournal } from "./apply-journal"
import { badParent, checkTargets, refuse, removedPaths, StepError, type StepFile } from "./apply-targets"
import { entryOf } from "../git-objects"
import { imageAt, imagesOf, stateOf, treeState, type Image, type TreeState } from "./apply-tree"
import { shownName } from "../names"

export { doneFile, journalFile, type Journal } from "./apply-journal"
export type { StepFile } from "./apply-targets"

export interface StepRequest {
  workspace: string
  /** This apply's directory (ours): the patch file, the staging tree, the rollback copy, the journal. */
  run: string
  files: StepFile[]
  /**
   * `apply` (the default) applies the patch. For an apply stopped mid-write (its run directory holds a
   * journal without `done`), decided path by path from what the workspace holds: `forward` finishes it
   * from the staged copies (`tree/`), `back` undoes it from the copies taken before (`before/`), each
   * copy checked against the patch's images first; `probe` only says where the files stand.
   */
  mode?: "apply" | "forward" | "back" | "probe"
  /** With `forward` or `back`: the temporaries the journal names. */
  temps?: string[]
}

export type StepAnswer =
  | {
      ok: true
      written: number
      /** Paths a recovery could not bring over: changed by someone else, or no sound copy to bring. */
      kept?: string[]
      /** Where the files stand afterwards (recoveries and probes). */
      tree?: TreeState
    }
  | {
      ok: false
      refused: boolean
      message: string
      hint: string
      /** Where the files stand after a failure once writing had begun (or a refusal of a patch already written). */
      tree?: TreeState
    }

async function copyEntry(from: string, to: string) {
  await mkdir(dirname(to), { recursive: true })
  const info = await lstat(from)
  if (info.isSymbolicLink()) await symlink(await readlink(from), to)
  // Swapped for a FIFO or a device since the check: opening it could block the step until its timeout.
  else if (!info.isFile())
    throw new StepError(true, `${shownName(from)} is no longer a regular file.`, "Restore it, then retry.")
  else {
    await copyFile(from, to)
    await chmod(to, info.mode & 0o777)
  }
}

/**
 * Moves `from` (a staged file or symlink) over `to` in one rename, through a temporary name of fixed
 * length in the same directory: a target whose name is 255 bytes still gets a temporary that fits.
 */
async function place(from: string, to: string, temp: string) {
  await mkdir(dirname(to), { recursive: true })
  await rm(temp, { force: true })
  try {
    await copyEntry(from, temp)
    await rename(temp, to)
  } catch (error) {
    // A copy cut short (ENOSPC, EIO) leaves no partial temporary: it would keep the disk full.
    await rm(temp, { force: true }).catch(() => undefined)
    throw error
  }
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

/** The targets as they are, twice: one copy to patch, one to roll back to; then git applies the patch to the first. */
async function stage(request: StepRequest) {
  const { workspace, run: dir, files } = request
  for (const file of files) {
    if (!file.oldOid) continue
    const source = file.oldPath ?? file.path
    await copyEntry(`${workspace}/${source}`, `${dir}/tree/${source}`)
    await copyEntry(`${workspace}/${source}`, `${dir}/before/${source}`)
  }
  await mkdir(`${dir}/tree`, { recursive: true })
  // Outside any repository (the ceiling stops discovery at the run directory): nothing a repository configures runs.
  const git = [
    "git",
    "-c",
    "core.symlinks=true",
    "-c",
    "core.fileMode=true",
    "-c",
    "core.quotePath=true",
    "apply",
    "--binary",
    "--whitespace=nowarn",
    "-p1",
    `${dir}/patch`,
  ]
  const env = {
    PATH: "/usr/bin:/bin",
    HOME: "/tmp/home",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CEILING_DIRECTORIES: dir,
    LANG: "C.UTF-8",
  }
  const result = await run(git, { cwd: `${dir}/tree`, env, timeoutMs: 300_000, maxOutputBytes: 64 * 1024 })
  // A disk that filled while git wrote the staging copy is no fault of the patch: retried once there is room.
  if (result.code !== 0 && /No space left on device|Disk quota exceeded/.test(result.stderr))
    throw new StepError(
      false,
      "patch_apply could not stage the patch, nothing was written: the disk is full " +
        `(${result.stderr.trim().slice(0, 200)}).`,
      "Free space on the disk of the state and cache directories, then retry.",
    )
  if (result.code !== 0)
    refuse(
      `a hunk does not apply: ${result.stderr.trim().slice(0, 400)}`,
      "Review the patch (patch_show) and apply the change by hand, or run the worker again.",
    )
  for (const file of files) {
    // A directory is no Git entry: a deleted file's name may now hold the directory of an added one.
    const staged = await entryOf(`${dir}/tree/${file.path}`).then((entry) =>
      entry?.mode === "directory" ? undefined : entry,
    )
    const expected = file.newOid ? { mode: file.newMode, oid: file.newOid } : undefined
    if (staged?.oid !== expected?.oid || staged?.mode !== expected?.mode)
      refuse(
        `the staged result of ${shownName(file.path)} is not what the patch records.`,
        "Discard this patch (patch_discard) and run the worker again.",
      )
  }
}

/**
 * Deletions (and rename sources) first, then the new content; on any failure, or when a written path
 * is not where the patch put it afterwards (a directory swapped meanwhile), everything is put back.
 * No check here: exported so a test can run it unconfined and watch it follow a swapped symlink.
 */
export async function writeTargets(workspace: string, dir: string, files: StepFile[]): Promise<void> {
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
      await place(
        `${dir}/tree/${file.path}`,
        `${workspace}/${file.path}`,
        `${workspace}/${tempFor(dir, file.path, "write")}`,
      )
    }
    for (const file of files.filter((f) => f.newOid)) {
      const parent = await badParent(workspace, file.path, new Set())
      const now = await entryOf(`${workspace}/${file.path}`)
      if (parent || now?.oid !== file.newOid || now?.mode !== file.newMode)
        throw new Error(`${shownName(file.path)} moved while it was written${parent ? ` (${parent})` : ""}`)
    }
  } catch (error) {
    // Put back what was there (from the copy taken before), remove what was new with the directories made for it.
    for (const step of done.reverse()) {
      await rm(`${workspace}/${step.path}`, { force: true }).catch(() => undefined)
      // A rollback that cannot restore one file still restores the others; the error below says what failed.
      const temp = `${workspace}/${tempFor(dir, step.path, "restore")}`
      if (step.existed)
        // Restoring is best effort on the way out: the StepError below is the failure the caller sees.
        await place(`${dir}/before/${step.path}`, `${workspace}/${step.path}`, temp).catch(() => undefined)
      else await pruneEmpty(workspace, step.path)
    }
    throw new StepError(
      false,
      `patch_apply failed while writing and was rolled back: ${(error as Error).message}.`,
      "Check the permissions and free space of the workspace, and that nothing else is changing it, then retry.",
    )
  }
}

const sameImage = (now: Image, image: Image) => now?.mode === image?.mode && now?.oid === image?.oid

/**
 * Brings every path of an apply stopped mid-write to one side, from the files as they are: each path
 * not there yet is removed, or gets its image from the run directory's copy (`tree/` forward,
 * `before/` back) once that copy is checked to hold exactly the image the patch records. A path
 * holding something neither image has is someone else's and kept, as is one whose copy is gone or
 * damaged. Forward writes nothing unless every path can get there: a half-way completion would only
 * make a second mixed tree. Returns the paths kept.
 */
async function roll(request: StepRequest, direction: "forward" | "back"): Promise<string[]> {
  const { workspace, run: dir, files } = request
  // First the temporaries: one cut short by the kill is never mistaken for a file, and never stays.
  await removeTemps(workspace, files, request.temps ?? tempsOf(dir, files))
  const copies = direction === "forward" ? "tree" : "before"
  const kept: string[] = []
  const removals: string[] = []
  const placements: string[] = []
  for (const images of imagesOf(files)) {
    const goal = direction === "forward" ? images.after : images.before
    const now = await imageAt(`${workspace}/${images.path}`)
    if (sameImage(now, goal)) continue
    if (stateOf(images, now) === "changed") kept.push(images.path)
    else if (!goal) removals.push(images.path)
    else if (sameImage(await imageAt(`${dir}/${copies}/${images.path}`), goal)) placements.push(images.path)
    else kept.push(images.path)
  }
  if (direction === "forward" && kept.length) return kept
  for (const path of removals) {
    await rm(`${workspace}/${path}`, { force: true })
    await pruneEmpty(workspace, path)
  }
  for (const path of placements) {
    // A parent that is no plain directory now is not written through (the sandbox holds it anyway).
    if (await badParent(workspace, path, new Set())) {
      kept.push(path)
      continue
    }
    const temp = `${workspace}/${tempFor(dir, path, direction === "forward" ? "write" : "restore")}`
    await place(`${dir}/${copies}/${path}`, `${workspace}/${path}`, temp)
  }
  return kept
}

/** Where the files stand, for an answer; a tree that cannot be read is left unsaid (the message stands). */
const standing = (request: StepRequest) => treeState(request.workspace, request.files).catch(() => undefined)

/** The recoveries and the probe: the answer carries where the files stand afterwards. */
async function recoverStep(request: StepRequest, mode: "forward" | "back" | "probe"): Promise<StepAnswer> {
  const kept = mode === "probe" ? [] : await roll(request, mode)
  const tree = await treeState(request.workspace, request.files)
  const goal = mode === "forward" ? "rolled-forward" : "rolled-back"
  // Only a recovery that reached its side ends the journal; otherwise the next process finds it again.
  if (mode !== "probe" && tree.outcome === goal) await finishJournal(request.run)
  return { ok: true, written: 0, kept, tree }
}

/** The whole step: check, stage, write (journalled); or a recovery of one stopped while writing. */
async function applyStep(request: StepRequest): Promise<StepAnswer> {
  let writing = false
  try {
    const mode = request.mode ?? "apply"
    if (mode !== "apply") return await recoverStep(request, mode)
    try {
      await checkTargets(request.workspace, request.files)
    } catch (error) {
      if (!(error instanceof StepError)) throw error
      // A patch already written whole (an earlier apply whose answer was lost) is no refusal: said so; one
      // written in part is refused with where each path stands.
      const tree = await standing(request)
      if (tree?.outcome === "rolled-forward") return { ok: true, written: 0, tree }
      const partly = tree && (tree.after.length > 0 || tree.missing.length > 0)
      return {
        ok: false,
        refused: error.refused,
        message: error.message,
        hint: error.hint,
        tree: partly ? tree : undefined,
      }
    }
    await stage(request)
    await writeJournal(request.run, {
      workspace: request.workspace,
      files: request.files,
      temps: tempsOf(request.run, request.files),
    })
    writing = true
    try {
      await writeTargets(request.workspace, request.run, request.files)
    } finally {
      // A rollback that failed too still leaves no temporary of ours behind.
      await removeTemps(request.workspace, request.files, tempsOf(request.run, request.files))
    }
    await finishJournal(request.run)
    return { ok: true, written: request.files.length }
  } catch (error) {
    // Once writing began, the files say how far it got: a failure after the last write (the end of the
    // journal on a full disk) is an apply done, one whose rollback was cut short is mixed.
    const tree = writing ? await standing(request) : undefined
    // Rolled back whole: nothing for a recovery to do (best effort: the journal left says the same to the next).
    if (tree?.outcome === "rolled-back") await finishJournal(request.run).catch(() => undefined)
    if (error instanceof StepError)
      return { ok: false, refused: error.refused, message: error.message, hint: error.hint, tree }
    return {
      ok: false,
      refused: false,
      message: `patch_apply could not run: ${(error as Error).message}`,
      hint: "Check the workspace's permissions and free space, then retry.",
      tree,
    }
  }
}

/** Entry inside the sandbox: the request on stdin, the answer on stdout. */
export async function stepMain(): Promise<void> {
  const request = JSON.parse(await Bun.stdin.text()) as StepRequest
  process.stdout.write(`${JSON.stringify(await applyStep(request))}\n`)
}
