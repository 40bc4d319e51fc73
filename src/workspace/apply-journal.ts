// The apply journal and its temporaries, inside the write step (apply-step.ts): node: builtins only.
// Roll back, not forward: the journal is written before the first write and names every target
// with its prior state (the step's `before/` copy) and every temporary, so any process after a crash
// can undo exactly this apply; rolling forward would need the staged tree whole, which a kill
// during staging does not leave.
import { createHash } from "node:crypto"
import { lstat, open, readdir, rename, rm } from "node:fs/promises"
import { dirname } from "node:path"
import type { StepFile } from "./apply-targets"

/**
 * Written before the first write, `done` after the last (or after a rollback): a journal without
 * `done` is an apply killed mid-write.
 */
export const journalFile = (run: string) => `${run}/journal.json`
export const doneFile = (run: string) => `${run}/done`

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
    await file.writeFile(JSON.stringify(journal))
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temp, journalFile(run))
  const dir = await open(run, "r")
  await dir.sync().finally(() => dir.close())
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
