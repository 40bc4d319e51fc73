// An applied patch past its keep time goes the way patch_discard takes it: a tombstone first, then the
// worktree, holding the worktree's writer state. A patch that is waiting again (a later turn collected
// new work), whose task still runs, or whose apply was killed mid-write (doctor names that) stays.
import type { Paths } from "../../config/paths"
import { interruptedApplies } from "../../workspace/apply"
import { readPatchRecord, saveDiscarded, type PatchRecord } from "../../workspace/patches"
import { removeWorktree } from "../../workspace/worktree"
import { appliedExpired } from "./sweep"
import { isFinished, type TaskRecord } from "../records"

export interface PatchHolder {
  runtime: { paths: Paths }
  read(taskId: string): Promise<TaskRecord | undefined>
  holding<T>(workspace: string, holder: string, work: () => Promise<T>): Promise<T>
}

export async function expireApplied(owner: PatchHolder, record: PatchRecord, now = Date.now()): Promise<boolean> {
  const dir = owner.runtime.paths.patchesDir
  const task = record.taskId ? await owner.read(record.taskId) : undefined
  if (task && !isFinished(task.status)) return false
  if ((await interruptedApplies(record.layout.dir)).length) return false
  return owner.holding(record.layout.tree, record.id, async () => {
    // Read again under the writer state: another pass, or a patch_discard, may have taken it meanwhile.
    const current = await readPatchRecord(dir, record.id)
    if (!current || !appliedExpired(current, now)) return false
    await saveDiscarded(dir, current, new Date(now).toISOString())
    await removeWorktree(owner.runtime.paths, current)
    return true
  })
}
