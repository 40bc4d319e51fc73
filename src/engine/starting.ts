// A new delegation, from the call to its launched turn: the policy gate first, then the checks of what
// was asked, readiness, admission of the workspace (canonical, sandboxed, offered the route), the budget,
// the writer state for writable work, and the record the launch writes (lifecycle.ts calls it).
import { timeoutLimits } from "../config/schema"
import { fail } from "../errors"
import { canonicalWorkspace } from "../workspace/root"
import { checkScope } from "../workspace/scope"
import {
  checkBriefSize,
  gatePolicy,
  planBudget,
  sessionPlace,
  missingMarkerWarning,
  type StartRequest,
  checkOffered,
  resolveRoute,
  resolveUserRole,
  rolePrompt,
} from "./admission"
import { type Runs, acquireWriter, launchTurn } from "./runs"
import { startedUnder } from "./idempotency"
import { refuseHostUnready, type Reclaims, type Runtime } from "./capacity"
import { checkOutputSchema, checkVerify } from "./outcome"
import { newRecord, newTaskId, noteProgress, type TaskRecord } from "./records"
import { checkFrozenGlobs } from "../workspace/snapshot"

/** What starting a task needs of the lifecycle. */
export interface StartDeps {
  runs: Runs
  runtime: Runtime
  reclaims: Reclaims
  /** This process recovers tasks: a dead holder's writer state is reconciled when a writer takes it (launching.ts). */
  recovers: boolean
}

/** Starts the task, or attaches to the one started under the same idempotency key; refuses before any write. */
export async function startTask(
  deps: StartDeps,
  request: StartRequest,
): Promise<{ record: TaskRecord; attached: boolean }> {
  // The policy first, then admission: a refused call gets no record, lock or session, and no other task's answer.
  const decision = await gatePolicy(deps.runtime, {
    ...request.policy,
    userRole: request.userRole,
    cwd: request.review?.source ?? request.cwd,
  })
  checkBriefSize(request.brief, deps.runtime.flags.maxBriefBytes)
  checkVerify(request.verify)
  checkFrozenGlobs(request.verifyFrozen)
  if (request.verifyFrozen && request.verify === undefined)
    throw fail(
      "Usage",
      "verify_frozen names files the verification holds, but there is no verify.",
      "Add verify, or drop verify_frozen.",
    )
  checkOutputSchema(request.outputSchema)
  const scope = checkScope(request.scope)
  // The same conditions doctor reports (readiness.ts): a missing launcher, an unsafe or unusable bwrap,
  // a state dir that cannot take the record.
  await refuseHostUnready(deps.runtime)
  const role =
    request.userRole === undefined || request.role === "runner"
      ? undefined
      : await resolveUserRole(deps.runtime, request.role, request.userRole, request.cwd)
  const config = await deps.runtime.config()
  const host = deps.runtime.host(config)
  // A review runs in the patch's worktree: admitted only as that patch's (its lane's claim names it).
  const owner = request.review && { ...host, worktrees: { ...host.worktrees!, owner: request.review.patchId } }
  const workspace = await canonicalWorkspace(request.cwd, owner ?? host, config, owner !== undefined)
  const existing = await startedUnder(deps.runs, request, workspace)
  if (existing) return { record: existing, attached: true }
  // Before any lock or session: an impossible budget fails here, naming the operation and reserve.
  const budget = planBudget({
    operation: request.role,
    role: request.role,
    limits: timeoutLimits(config),
    bridgeTimeoutMs: deps.runtime.flags.bridgeTimeoutMs,
    overrideMs: request.timeoutMs,
    callTimeoutS: request.callTimeoutS ?? role?.timeoutS,
    commandTimeoutS: request.commandTimeoutS,
  })
  const { route, checkAsNamed, fallbacks } = await resolveRoute(deps.runtime, request.role, {
    model: request.model,
    variant: request.variant,
    named: role,
  })
  const id = newTaskId()
  let prompt: string | undefined
  const place = await sessionPlace(deps.runtime, workspace, host, request.isolation, id, deps.runs.store, deps.reclaims)
  try {
    // Fail closed before any lock or record: no session starts where file access would not be sandboxed.
    // The route is checked on the server the sandbox was confirmed on, both again on its successor if it dies.
    // The role's prompt is read on the same server, an OpenCode agent's from its global config.
    await deps.runtime.sandboxed(
      place.dir,
      (route || role) &&
        (async (connection) => {
          if (route) await checkOffered(deps.runtime, connection.client, place.dir, request.role, route, checkAsNamed)
          if (role) prompt = await rolePrompt(connection.client, place.dir, role)
        }),
    )
    if (request.writable) await acquireWriter(deps.runs, place.dir, id, deps.recovers)
  } catch (error) {
    await place.discard()
    throw error
  }
  const record = newRecord(request, {
    id,
    workspace: place.dir,
    route,
    fallbacks,
    operationMs: budget.operationMs,
    isolation: place.isolation,
    verify: request.verify,
    verifyFrozen: request.verifyFrozen,
    outputSchema: request.outputSchema,
    scope,
    reviewed: request.reviewed,
    parallel: request.queued || undefined,
    userRole: role && prompt !== undefined ? { name: role.name, source: role.source, prompt } : undefined,
  })
  // A new record, not yet saved: its first save is the launch's.
  const { missingMarkers, ...call } = decision
  record.calls = [{ ...call, turn: 1 }]
  // Remembered sensitive markers that are gone: obeyed all the same, and said first in the result.
  if (missingMarkers) record.turnWarnings = [missingMarkerWarning(missingMarkers)]
  // The first line of its progress names the role the person defined, and where.
  if (record.userRole) noteProgress(record, `as role ${record.userRole.name} (${record.userRole.source})`)
  await launchTurn(deps.runs, record, request.brief, host, request.relay, request.queued)
  return { record, attached: false }
}
