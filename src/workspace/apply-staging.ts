// Where patch_apply stages: `apply-<hex>/` run directories in the patch's lane directory, so the
// lane's emptying (patch_discard, lane reuse) removes them with it. Read here for recovery and doctor.
import { lstat, readdir } from "node:fs/promises"
import { z } from "zod"
import { doneFile, journalFile, type Journal } from "./apply-step"

const STAGING_NAME = /^apply-[0-9a-f]{8}$/

const fileSchema = z.looseObject({
  path: z.string(),
  oldPath: z.string().optional(),
  oldMode: z.string().optional(),
  newMode: z.string().optional(),
  oldOid: z.string().optional(),
  newOid: z.string().optional(),
})
const journalSchema = z.looseObject({
  workspace: z.string(),
  files: z.array(fileSchema),
  temps: z.array(z.string()).optional(),
})

/** The run directories in a lane directory (absolute). */
export async function stagingDirs(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]) // a lane not made yet stages nothing
  return names.filter((name) => STAGING_NAME.test(name)).map((name) => `${dir}/${name}`)
}

/**
 * A run directory's journal, or undefined when it has none it can use: one that cannot be read or
 * fails its shape was never written whole (it is renamed into place after an fsync), so that apply
 * never started writing.
 */
export async function readJournal(run: string): Promise<Journal | undefined> {
  // Never opened unless a regular file: a FIFO would block the reader, a symlink lead elsewhere.
  const info = await lstat(journalFile(run)).catch(() => undefined) // absent: killed before its first write
  if (!info?.isFile()) return undefined
  const text = await Bun.file(journalFile(run))
    .text()
    .catch(() => undefined) // unreadable: the same as absent
  if (text === undefined) return undefined
  try {
    const parsed = journalSchema.safeParse(JSON.parse(text))
    return parsed.success
      ? { workspace: parsed.data.workspace, files: parsed.data.files, temps: parsed.data.temps ?? [] }
      : undefined
  } catch {
    return undefined // not JSON: the same as absent
  }
}

/** An apply of this lane killed while writing: a journal and no `done`. */
export async function interruptedApplies(
  dir: string,
): Promise<Array<{ run: string; workspace: string; files: number }>> {
  const found: Array<{ run: string; workspace: string; files: number }> = []
  for (const run of await stagingDirs(dir)) {
    const journal = await readJournal(run)
    if (journal && !(await Bun.file(doneFile(run)).exists()))
      found.push({ run, workspace: journal.workspace, files: journal.files.length })
  }
  return found
}
