// Worktree lanes as a budget the engine keeps: how many there may be (config maxWorktreeLanes), what
// they take on disk, and which tasks may still be working in one (an unfinished task whose workspace
// lies in it), so a lane whose claim cannot prove itself is taken back only when none is.
import type { Paths } from "../../config/paths"
import { readdir } from "node:fs/promises"
import { LANE_NAME, PATCH_ID } from "../../sandbox"
import { DISK_WALK_LIMIT, diskUse, type DiskUse } from "../../workspace/disk"
import {
  patchIds,
  patchRef,
  type LaneBounds,
  type LaneReclaim,
  auditLanes,
  claimedLanes,
} from "../../workspace/worktree"
import { isFinished } from "../records"
import { TaskStore } from "../store"

/**
 * True while a task that is not finished has its workspace in `dir`: its worker (or a takeover of it) may run there.
 */
function laneInUse(store: TaskStore): LaneBounds["inUse"] {
  return async (dir) =>
    (await store.unfinished()).some(
      (record) => !isFinished(record.status) && (record.workspace === dir || record.workspace.startsWith(`${dir}/`)),
    )
}

/** Lanes this process took back and has not reported yet, newest last: a listing reports each once. */
export class Reclaims {
  private readonly unreported: LaneReclaim[] = []

  /** Bounded: a process nobody lists from keeps the newest (each was also logged). */
  readonly note = (entry: LaneReclaim): void => {
    if (this.unreported.push(entry) > 50) this.unreported.shift()
  }

  take(): LaneReclaim[] {
    return this.unreported.splice(0)
  }
}

export function laneBounds(max: number, store: TaskStore, reclaims?: Reclaims): LaneBounds {
  return { max, inUse: laneInUse(store), onReclaim: reclaims?.note }
}

export interface LaneState {
  /** Lanes whose claim is held now. */
  claimed: number
  max: number
  /** Every worktree: a collected patch's recorded figure, the others (running, free, unreadable) measured now. */
  disk: DiskUse
  /** Reclaims not reported yet (this audit's, and earlier ones noted in `reclaims`); reported once. */
  reclaimed: LaneReclaim[]
}

/** Takes back the lanes no claim, patch or task holds, then measures them: for doctor and task_list. */
export async function laneState(
  paths: Pick<Paths, "patchesDir" | "worktreesDir" | "tasksDir">,
  max: number,
  reclaims = new Reclaims(),
): Promise<LaneState> {
  await auditLanes(paths.patchesDir, paths.worktreesDir, {
    inUse: laneInUse(new TaskStore(paths.tasksDir)),
    onReclaim: reclaims.note,
  })
  return {
    claimed: (await claimedLanes(paths.patchesDir)).length,
    max,
    disk: await worktreesDisk(paths),
    reclaimed: reclaims.take(),
  }
}

/**
 * What the worktrees take, cheaply: a waiting patch's worktree does not change until it is applied or
 * discarded, so its figure from collection stands; only the rest is walked, within one bound in all.
 */
async function worktreesDisk(paths: Pick<Paths, "patchesDir" | "worktreesDir">): Promise<DiskUse> {
  const recorded = new Map<string, { bytes: number; partial: boolean }>()
  for (const id of await patchIds(paths.patchesDir)) {
    const ref = await patchRef(paths.patchesDir, id)
    if (ref.kind === "ok" && ref.status === "ready" && ref.disk) recorded.set(ref.dir, ref.disk)
  }
  // No worktrees directory yet: nothing on disk.
  const names = (await readdir(paths.worktreesDir).catch(() => [] as string[])).filter(
    (name) => LANE_NAME.test(name) || PATCH_ID.test(name),
  )
  const total: DiskUse = { bytes: 0, entries: 0, partial: false }
  for (const name of names) {
    const dir = `${paths.worktreesDir}/${name}`
    const known = recorded.get(dir)
    const use = known ? { ...known, entries: 1 } : diskUse(dir, Math.max(1, DISK_WALK_LIMIT - total.entries))
    total.bytes += use.bytes
    total.entries += use.entries
    total.partial ||= use.partial
  }
  return total
}
