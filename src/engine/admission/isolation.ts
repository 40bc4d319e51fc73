// Where a new task's session runs: the caller's workspace, or for a worker with isolation "worktree"
// a fresh snapshot of it (src/workspace/worktree/worktree.ts), registered to the task, which holds it alone.
// A start that fails after the snapshot removes it: nothing was collected from it yet. A continue
// runs there only while the worktree is still the task's own (checkOwnWorktree).
import { fail } from "../../errors"
import { LANE_NAME, type HostContext } from "../../sandbox"
import { laneHolder, createWorktree, removeWorktree } from "../../workspace/worktree"
import { readPatchRecord, savePatchRecord } from "../../workspace/patches"
import { type Runtime, laneBounds, type Reclaims } from "../capacity"
import type { TaskRecord } from "../records"
import type { TaskStore } from "../store"

export type Isolation = "in_place" | "worktree"

export interface SessionPlace {
  dir: string
  /** For the task record; absent in place. */
  isolation?: TaskRecord["isolation"]
  /** Undoes the snapshot of a start that failed. */
  discard(): Promise<void>
}

export async function sessionPlace(
  runtime: Runtime,
  workspace: string,
  host: HostContext,
  isolation: Isolation | undefined,
  taskId: string,
  store: TaskStore,
  reclaims?: Reclaims,
): Promise<SessionPlace> {
  if (isolation !== "worktree") return { dir: workspace, discard: async () => {} }
  // The lane budget is checked here, before any lock, record or session: a full one is a refusal naming patches.
  const lanes = laneBounds((await runtime.config()).maxWorktreeLanes, store, reclaims)
  const { record, layout } = await createWorktree(workspace, { host, paths: runtime.paths, taskId, lanes })
  const discard = () => removeWorktree(runtime.paths, record)
  await savePatchRecord(runtime.paths.patchesDir, record).catch(async (error: unknown) => {
    await discard()
    throw error
  })
  return { dir: layout.tree, isolation: { mode: "worktree", source: workspace, patchId: record.id }, discard }
}

/**
 * Refuses to run a task again where its directory now resolves elsewhere: a symlink put in the place
 * of its workspace (by a worker in a parent directory, say) would move the rework to another tree.
 */
export function checkSamePlace(record: TaskRecord, recorded: string, now: string): void {
  if (now === recorded) return
  throw fail(
    "Usage",
    `Task ${record.id} cannot be continued: its workspace ${recorded} now resolves to ${now}, another directory.`,
    `Restore ${recorded} if it was replaced by a link you did not make; to work in ${now}, start a new task there.`,
    { task: record.id, recorded, now },
  )
}

/**
 * Refuses to run an isolated task again unless its worktree is still its own: its patch's registry
 * entry exists and names this task and this worktree, and the lane's claim names that patch (and this
 * task). A discarded patch frees its lane for any other worker, another repository's included.
 */
export async function checkOwnWorktree(runtime: Runtime, record: TaskRecord): Promise<void> {
  const isolation = record.isolation
  if (!isolation) return
  const { patchesDir, worktreesDir } = runtime.paths
  const refuse = (why: string, data: Record<string, unknown> = {}) =>
    fail(
      "Usage",
      `Task ${record.id} cannot be continued: ${why}.`,
      `Start a new worker with isolation "worktree" in ${isolation.source}, with the rework in its brief.`,
      { task: record.id, ...data },
    )
  const patch = await readPatchRecord(patchesDir, isolation.patchId)
  if (!patch) throw refuse(`its patch ${isolation.patchId} and isolated worktree are gone (patch_discard removed them)`)
  if (patch.taskId !== record.id || patch.layout.tree !== record.workspace)
    throw refuse(`patch ${patch.id} and its worktree belong to ${patch.taskId ? `task ${patch.taskId}` : "no task"}`)
  const lane = patch.layout.dir.startsWith(`${worktreesDir}/`) ? patch.layout.dir.slice(worktreesDir.length + 1) : ""
  // A worktree made before lanes is its own directory, named by its patch: no lane to share.
  if (!LANE_NAME.test(lane)) return
  const holder = await laneHolder(patchesDir, lane)
  if (holder?.patchId === patch.id && (holder.taskId === undefined || holder.taskId === record.id)) return
  const now = holder ? `patch ${holder.patchId} holds it now` : "no claim holds it"
  throw refuse(`its worktree's lane ${lane} is no longer its own (${now})`, { lane })
}
