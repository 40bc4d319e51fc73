// An idempotency key names one delegation: a call repeating it gets the task already started under
// it (the followed record when this process follows it), never another role's or workspace's report.
import { fail } from "../errors"
import type { Engine } from "./engine"
import type { StartRequest } from "./request"
import type { TaskRecord } from "./tasks"

/** The task started under the request's key, if any; refused when the key belongs to another delegation. */
export async function startedUnder(
  engine: Engine,
  request: StartRequest,
  workspace: string,
): Promise<TaskRecord | undefined> {
  if (!request.idempotencyKey) return undefined
  const existing = await engine.store.findByKey(request.idempotencyKey)
  if (!existing) return undefined
  if (existing.role !== request.role || (existing.isolation?.source ?? existing.workspace) !== workspace)
    throw fail(
      "Usage",
      `idempotency_key "${request.idempotencyKey}" belongs to ${existing.role} task ${existing.id} ` +
        `in ${existing.workspace}.`,
      "Use a new key for a different delegation.",
    )
  return engine.live.get(existing.id)?.record ?? existing
}
