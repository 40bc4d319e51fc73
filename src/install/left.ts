// What uninstall leaves behind on purpose: the state dir (task records, stored patches, runner logs)
// and the cache dir (isolated worktrees). It never deletes them itself: an unapplied patch, or a log
// a person still wants, lives there. It says where they are, what they take and how to remove them.
import { existsSync } from "node:fs"
import type { Paths } from "../config/paths"
import { diskUse, sizeText } from "../workspace/disk"
import { listPatches, patchState } from "../workspace/patches"

export interface LeftDir {
  what: string
  path: string
  bytes: number
  /** The walk stopped early: bytes is a lower bound. */
  partial: boolean
}

/** A path as one sh word. Pure. */
const shellWord = (path: string) => (/^[\w./+-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`)

/** The lines uninstall prints about them (none when neither exists). Pure. */
export function leftLines(dirs: LeftDir[], patches: { waiting: number; applied: number }, dryRun: boolean): string[] {
  if (!dirs.length) return []
  const verb = dryRun ? "Would leave" : "Left"
  const lines = dirs.map(
    (dir) => `${verb} the ${dir.what} ${dir.path} (${dir.partial ? "at least " : ""}${sizeText(dir.bytes)}).`,
  )
  if (patches.waiting + patches.applied)
    lines.push(
      `It holds ${patches.waiting} patch(es) waiting for review and ${patches.applied} applied, not discarded: ` +
        `remove them only if you no longer want them.`,
    )
  lines.push(`To remove them too: rm -rf ${dirs.map((dir) => shellWord(dir.path)).join(" ")}`)
  return lines
}

/** The state and cache dirs as they are now, and the stored patches' states. */
export async function measureLeft(
  paths: Pick<Paths, "stateDir" | "cacheDir" | "patchesDir">,
): Promise<{ dirs: LeftDir[]; patches: { waiting: number; applied: number } }> {
  const dirs = [
    { what: "state dir (task records, patches, logs)", path: paths.stateDir },
    { what: "cache dir (isolated worktrees)", path: paths.cacheDir },
  ]
    .filter((dir) => existsSync(dir.path))
    .map((dir) => {
      const use = diskUse(dir.path, 1_000_000)
      return { ...dir, bytes: use.bytes, partial: use.partial }
    })
  const { records } = await listPatches(paths.patchesDir)
  const states = records.map(patchState)
  return {
    dirs,
    patches: {
      waiting: states.filter((s) => s === "waiting").length,
      applied: states.filter((s) => s === "applied").length,
    },
  }
}
