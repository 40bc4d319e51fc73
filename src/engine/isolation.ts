// Where a new task's session runs: the caller's workspace, or for a worker with isolation "worktree"
// a fresh snapshot of it (src/workspace/worktree.ts), registered to the task, which holds it alone.
// A start that fails after the snapshot removes it: nothing was collected from it yet.
import type { HostContext } from "../sandbox"
import { savePatchRecord } from "../workspace/patches"
import { createWorktree, removeWorktree } from "../workspace/worktree"
import type { Runtime } from "./runtime"
import type { TaskRecord } from "./tasks"

export type Isolation = "in_place" | "worktree"

export interface SessionPlace {
  dir: string
  /** For the task record; absent in place. */
  isolation?: TaskRecord["isolation"]
  /** Undoes the snapshot of a start that failed. */
  discard(): Promise<void>
}

export async function sessionPlace(runtime: Runtime, workspace: string, host: HostContext, isolation: Isolation | undefined, taskId: string): Promise<SessionPlace> {
  if (isolation !== "worktree") return { dir: workspace, discard: async () => {} }
  const { record, layout } = await createWorktree(workspace, host, runtime.paths)
  const discard = () => removeWorktree(runtime.paths, record)
  record.taskId = taskId
  await savePatchRecord(runtime.paths.patchesDir, record).catch(async (error: unknown) => {
    await discard()
    throw error
  })
  return { dir: layout.tree, isolation: { mode: "worktree", source: workspace, patchId: record.id }, discard }
}
