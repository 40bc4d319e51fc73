// Worktree lanes as a budget the engine keeps: how many there may be (config maxWorktreeLanes), what
// they take on disk, and which tasks may still be working in one (an unfinished task whose workspace
// lies in it), so a lane whose claim cannot prove itself is taken back only when none is.
import type { Paths } from "../config/paths"
import { diskUse, type DiskUse } from "../workspace/disk"
import { reclaimedLanes, type LaneBounds, type LaneReclaim } from "../workspace/lane-audit"
import { auditLanes, claimedLanes } from "../workspace/lanes"
import { isFinished, TaskStore } from "./tasks"

/** True while a task that is not finished has its workspace in `dir`: its worker (or a takeover of it) may run there. */
export function laneInUse(store: TaskStore): LaneBounds["inUse"] {
  return async (dir) => (await store.list()).some((record) => !isFinished(record.status) && (record.workspace === dir || record.workspace.startsWith(`${dir}/`)))
}

export function laneBounds(max: number, store: TaskStore): LaneBounds {
  return { max, inUse: laneInUse(store) }
}

export interface LaneState {
  /** Lanes whose claim is held now. */
  claimed: number
  max: number
  /** The whole worktrees directory measured now (every lane, held or not). */
  disk: DiskUse
  /** Reclaims not reported yet (this audit's and earlier ones of this process); reported once. */
  reclaimed: LaneReclaim[]
}

/** Takes back the lanes no claim, patch or task holds, then measures them: for doctor and task_list. */
export async function laneState(paths: Pick<Paths, "patchesDir" | "worktreesDir" | "tasksDir">, max: number, store = new TaskStore(paths.tasksDir)): Promise<LaneState> {
  await auditLanes(paths.patchesDir, paths.worktreesDir, { inUse: laneInUse(store) })
  return { claimed: (await claimedLanes(paths.patchesDir)).length, max, disk: diskUse(paths.worktreesDir), reclaimed: reclaimedLanes.splice(0) }
}
