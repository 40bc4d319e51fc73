// Files that say who holds something (a concurrency slot, a worktree lane), taken with link(2) so
// exactly one taker wins, and taken back from a holder that is gone by whoever finds it.
import { link, rename, rm } from "node:fs/promises"
import type { z } from "zod"
import { readStateFile } from "./state-file"

/** Links `temp` (a whole file already written) to `file`; false when `file` exists, i.e. someone else holds it. */
export function linkExclusive(temp: string, file: string): Promise<boolean> {
  return link(temp, file).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return false
      throw error
    },
  )
}

/**
 * True while the holder `file` names still holds (`held` decides); a holder that is gone has its file
 * moved out of the way and removed, and false is returned. A file that is absent or unreadable is free.
 */
export async function holdsOrReclaim<T>(file: string, schema: z.ZodType<T>, fix: string, held: (holder: T) => boolean | Promise<boolean>): Promise<boolean> {
  const holder = await readStateFile(file, schema, fix)
  if (!holder) return false
  if (await held(holder)) return true
  // Renamed first, so of two processes reclaiming it at once only one removes it.
  const aside = `${file}.${process.pid}.stale`
  const renamed = await rename(file, aside).then(
    () => true,
    () => false,
  )
  // Another process reclaimed it first: the name is free, or already someone's new file (linkExclusive decides).
  if (!renamed) return false
  const moved = await readStateFile(aside, schema, fix)
  // Between the read and the rename a live taker may have put its own file there: put it back.
  if (moved && (await held(moved))) {
    await link(aside, file).catch(() => undefined) // someone took the name meanwhile: theirs stands
    await rm(aside, { force: true })
    return true
  }
  await rm(aside, { force: true })
  return false
}
