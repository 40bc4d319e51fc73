// An idempotency key names one delegation: a call repeating it gets the task already started under
// it (the followed record when this process follows it), never another role's or workspace's report.
import { fail } from "../errors"
import type { Runs } from "./runs"
import type { StartRequest } from "./admission"
import type { TaskRecord } from "./records"

/** The task started under the request's key, if any; refused when the key belongs to another delegation. */
export async function startedUnder(
  runs: Runs,
  request: StartRequest,
  workspace: string,
): Promise<TaskRecord | undefined> {
  if (!request.idempotencyKey) return undefined
  const existing = await runs.store.findByKey(request.idempotencyKey)
  if (!existing) return undefined
  if (existing.role !== request.role || (existing.isolation?.source ?? existing.workspace) !== workspace)
    throw fail(
      "Usage",
      `idempotency_key "${request.idempotencyKey}" belongs to ${existing.role} task ${existing.id} ` +
        `in ${existing.workspace}.`,
      "Use a new key for a different delegation.",
    )
  return runs.live.get(existing.id)?.record ?? existing
}
