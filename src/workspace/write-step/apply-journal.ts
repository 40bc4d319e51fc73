// The apply journal and its temporaries, inside the write step (apply-step.ts): node: builtins and the
// sealer only. The journal is written after staging and before the first write, so once it exists the
// staged tree (`tree/`) and the copies of the files as they were (`before/`) are whole: any process
// after a crash can finish the apply or undo it, path by path from what the workspace holds
// (apply-tree.ts). It is sealed (its length and checksum): a journal a failing disk damaged is never
// followed; the patch's record names the same files.
import { createHash } from "node:crypto"
import { lstat, open, readdir, rename, rm } from "node:fs/promises"
import { dirname } from "node:path"
import { seal } from "../../util/sealed"
import type { StepFile } from "./apply-targets"

/**
 * Written before the first write, renamed to `done` after the last (or after a rollback): a journal
 * without `done` is an apply stopped mid-write. A rename, not a new file: on a disk out of inodes the
 * end of an apply that wrote every file still gets recorded.
 */
export const journalFile = (run: string) => `${run}/journal.json`
export const doneFile = (run: string) => `${run}/done`

/** The sealed kind of a journal (util/sealed.ts): its checksum and length are verified before recovery acts on it. */
export const JOURNAL_KIND = "oc-orch-journal/2"

/** Every temporary this step makes is named so: a recovery finds one left beside any target, by name alone. */
const TEMP_NAME = /^\.oc-orch-[0-9a-f]{12}$/

/**
 * The temporary beside `path` for one use (`write`, `restore`): fixed length (a 255-byte name still
 * fits), derived from the run and the path, so the journal names it before it exists. Pure.
 */
export function tempFor(run: string, path: string, use: "write" | "restore"): string {
  const id = createHash("sha256").update(`${run}\0${use}\0${path}`).digest("hex").slice(0, 12)
  return `${dirname(path)}/.oc-orch-${id}`
}

export interface Journal {
  workspace: string
  files: StepFile[]
  /** Workspace-relative temporaries this apply may create: removed by a recovery before anything else. */
  temps: string[]
}

/**
 * The journal on disk before the first write: written, fsynced, renamed, then the directory fsynced,
 * so a crash leaves it whole or absent.
 */
export async function writeJournal(run: string, journal: Journal) {
  const temp = `${run}/journal.tmp`
  const file = await open(temp, "w", 0o600)
  try {
    await file.writeFile(seal(JOURNAL_KIND, JSON.stringify(journal)))
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temp, journalFile(run))
  await syncDir(run)
}

/** The apply (or its rollback) is over: the journal becomes `done` in one rename, made durable. */
export async function finishJournal(run: string) {
  await rename(journalFile(run), doneFile(run)).catch(async (error: NodeJS.ErrnoException) => {
    // A recovery that found no journal whole still marks its run finished.
    if (error.code !== "ENOENT") throw error
    await (await open(doneFile(run), "w", 0o600)).close()
  })
  await syncDir(run)
}

async function syncDir(dir: string) {
  const handle = await open(dir, "r")
  await handle.sync().finally(() => handle.close())
}

/**
 * Removes every temporary an apply of `files` may have left: the ones its journal names, and any with
 * the recognisable name in a target's directory (an earlier run's, or one from before journals named them).
 */
export async function removeTemps(workspace: string, files: StepFile[], named: string[]): Promise<void> {
  // Only names of the temporary's shape, never climbing: a journal is ours, but one changed on disk
  // removes nothing else.
  const temps = named.filter((temp) => TEMP_NAME.test(temp.split("/").at(-1) ?? "") && !temp.split("/").includes(".."))
  // tried again by name below
  for (const temp of temps) await rm(`${workspace}/${temp}`, { force: true }).catch(() => undefined)
  const dirs = new Set(
    files
      .flatMap((file) => [file.path, file.oldPath])
      .filter((p): p is string => p !== undefined)
      .map(dirname),
  )
  for (const dir of dirs) {
    const info = await lstat(`${workspace}/${dir}`).catch(() => undefined) // a directory that is gone holds none
    if (!info?.isDirectory()) continue
    // unreadable: nothing of ours to find
    const names = await readdir(`${workspace}/${dir}`).catch(() => [] as string[])
    // One that cannot go keeps the others from being skipped; the next recovery tries it again.
    for (const name of names.filter((n) => TEMP_NAME.test(n)))
      await rm(`${workspace}/${dir}/${name}`, { force: true }).catch(() => undefined)
  }
}

/** Every temporary name an apply of `files` in `run` may use, workspace-relative (the journal's `temps`). */
export const tempsOf = (run: string, files: StepFile[]) =>
  files
    .flatMap((file) => [file.path, file.oldPath].filter((p): p is string => p !== undefined))
    .flatMap((path) => [tempFor(run, path, "write"), tempFor(run, path, "restore")])
