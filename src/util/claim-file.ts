// Files that say who holds something (a concurrency slot, a worktree lane), taken with link(2) so
// exactly one taker wins, and taken back from a holder that is gone by whoever finds it. Each is
// sealed (its checksum and length) and fsynced before it is linked: one changed on disk fails its
// check and is set aside rather than believed.
import { link, lstat, rename, rm } from "node:fs/promises"
import { dirname } from "node:path"
import type { z } from "zod"
import { syncDirectory, writeDurable } from "./fs"
import { sealState } from "./sealed"
import { readStateFile } from "./state-file"

/**
 * Writes a claim to `temp`, sealed (its checksum and length, util/sealed.ts) and fsynced, ready for
 * linkExclusive: a claim cut short or changed on disk is never read as a holder.
 */
export const writeClaim = (temp: string, claim: unknown) => writeDurable(temp, sealState(claim), 0o600)

/**
 * Links `temp` (a whole file already written) to `file`, then fsyncs the directory; false when `file`
 * exists, i.e. someone else holds it.
 */
export async function linkExclusive(temp: string, file: string): Promise<boolean> {
  const linked = await link(temp, file).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return false
      throw error
    },
  )
  if (linked) await syncDirectory(dirname(file))
  return linked
}

/**
 * A reclaim holds its lock for milliseconds; one left by a reclaimer killed while holding it is passed over after this.
 */
const REAP_STALE_MS = 10_000

/**
 * True while the holder `file` names still holds (`held` decides); a holder that is gone has its file
 * removed, and false is returned. A file that is absent or unreadable is free.
 *
 * Only the very file judged gone is removed: under a reclaim lock (`<file>.reap`, a second link to the
 * file as it is then, so one reclaimer at a time), only while the name still links that inode and its
 * holder, read again, is still gone. A
 * move-aside-then-put-back would leave the name empty while a live taker's file was aside, and a third
 * taker linking then would share the slot or lane with the one displaced.
 */
export async function holdsOrReclaim<T>(
  file: string,
  schema: z.ZodType<T>,
  fix: string,
  held: (holder: T) => boolean | Promise<boolean>,
): Promise<boolean> {
  const judged = await lstat(file).catch(() => undefined) // absent: free, as readStateFile says next
  const holder = await readStateFile(file, schema, fix)
  if (!holder || !judged) return false
  if (await held(holder)) return true
  const outcome = await removeJudged(file, judged, async () => {
    const again = await readStateFile(file, schema, fix)
    if (!again) return "free"
    return (await held(again)) ? "held" : "gone"
  })
  return outcome === "held"
}

/**
 * Removes `file`, judged gone when it was `judged` (its lstat then), only while the name still links
 * that very file and `judge`, asked again under the reclaim lock, still says "gone": "removed" then;
 * "held" while it is taken (another reclaim under way, or a taker's file there now), "free" when the
 * name is free. Under the lock nothing replaces the name: takers link only where it is absent, and
 * reclaimers need the lock. Shared by holdsOrReclaim and the lanes' audit, which judges claims its own way.
 * With `replacement` (a whole file already written), that file is renamed over it instead of removing
 * it: the holder changes and the name is never empty, so no taker links in between (a slot's adoption).
 */
export async function removeJudged(
  file: string,
  judged: { ino: number },
  judge: () => Promise<"gone" | "held" | "free">,
  replacement?: string,
): Promise<"removed" | "held" | "free"> {
  const reap = `${file}.reap`
  const lock = await takeReap(file, reap)
  if (lock !== "taken") return lock === "busy" ? "held" : "free"
  const locked = await lstat(reap).catch(() => undefined) // gone: compared as changed
  try {
    const now = await lstat(file).catch(() => undefined) // gone: compared as changed
    // Changed since it was judged: another reclaimer freed it and a taker's file stands there now.
    if (!now || !locked || locked.ino !== judged.ino || now.ino !== judged.ino) return now ? "held" : "free"
    // Judged again under the lock: an inode number is reused, so a taker's new file may carry the old one.
    const verdict = await judge()
    if (verdict !== "gone") return verdict
    if (replacement) {
      await rename(replacement, file)
      await syncDirectory(dirname(file))
    } else await rm(file, { force: true })
    return "removed"
  } finally {
    const mine = await lstat(reap).catch(() => undefined) // passed over as stale and retaken: theirs stands
    if (mine && mine.ino === locked?.ino) await rm(reap, { force: true })
  }
}

/**
 * Takes the reclaim lock of `file` (`<file>.reap`, a second link to the file as it is now): "gone" when
 * the name was freed meanwhile, "busy" while another reclaimer holds it.
 */
async function takeReap(file: string, reap: string): Promise<"taken" | "busy" | "gone"> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const code = await link(file, reap).then(
      () => undefined,
      (error: NodeJS.ErrnoException) => error.code,
    )
    if (code === undefined) return "taken"
    if (code === "ENOENT") return "gone"
    if (code !== "EEXIST") throw new Error(`cannot take the reclaim lock ${reap}: ${code}`)
    const info = await lstat(reap).catch(() => undefined) // released meanwhile: the next attempt takes it
    if (info && Date.now() - info.ctimeMs < REAP_STALE_MS) return "busy"
    await rm(reap, { force: true })
  }
  return "busy"
}
