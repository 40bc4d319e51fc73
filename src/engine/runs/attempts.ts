// How a task's turn is attempted until one counts. A read-only task whose shared server died runs once
// more on the new server; a read-only turn that failed on a transient provider error before producing
// anything runs again in a fresh session, after a backoff (retry.ts retryDelay decides). A writer
// runs once: its edits so far are in the workspace, and the parent decides what happens next.
import { removeSession } from "../../opencode/session"
import { statusOf, type Turn, classifyFailure, retryDelay, TRANSIENT_RETRIES, nextRoute } from "../turn"
import type { Runtime } from "../capacity"
import { type TaskRecord, settleSegment, spendingOf } from "../records"
import type { TaskStore } from "../store"

export interface AttemptDeps {
  runtime: Runtime
  store: TaskStore
  signal: AbortSignal
  /** One turn on the shared server (runs.ts); `attach` follows a session already busy. */
  turn(attach: boolean): Promise<Turn>
  progress(line: string): void
}

/**
 * The turn that counts: the last attempt's, once none is run again. A refusal before any step on a
 * route config.json lists more of moves to the next one (fallback.ts), in a fresh session.
 */
export async function attemptTurn(record: TaskRecord, attach: boolean, deps: AttemptDeps): Promise<Turn> {
  // What the task had spent when this route began: the route's own spending is what it adds.
  const spentSoFar = () => structuredClone(spendingOf(record).spent)
  let before = spentSoFar()
  let turn = await attemptRoute(record, attach, deps)
  for (;;) {
    const failure = turn.refused
      ? classifyFailure({ status: "failed", text: turn.refused })
      : turn.outcome.kind === "lost"
        ? undefined
        : classifyTurn(turn)
    const acted = Boolean(
      turn.acted || turn.transcript?.steps || turn.transcript?.tools.length || turn.transcript?.text,
    )
    const move = nextRoute({ failure, acted, fallbacks: routesLeft(record), current: record.route })
    if (!move || deps.signal.aborted) return turn
    deps.progress(move.line)
    // In the provider's words where OpenCode passed them on, else what the kind means.
    const said = turn.refused ?? (turn.outcome.kind === "error" ? turn.outcome.message : turn.transcript?.error)
    const why = `${move.kind}: ${(said ?? failure?.advice ?? "").slice(0, 300)}`
    const moved = (r: TaskRecord) => {
      const spending = spendingOf(r)
      settleSegment(spending, turn.sessionID, turn.transcript)
      const tokens = { ...spending.spent.tokens }
      for (const key of Object.keys(tokens) as (keyof typeof tokens)[])
        tokens[key] = Math.max(0, tokens[key] - before.tokens[key])
      const cost = Math.max(0, spending.spent.cost - before.cost)
      const left = { model: move.from, why, kind: move.kind, tokens, cost }
      r.fallbackFrom = [...(r.fallbackFrom ?? []), left]
      r.route = move.to
      r.fallbacks = move.rest.length ? move.rest : undefined
      r.sessionID = undefined
    }
    await deps.store.update(record, moved, { quiet: true })
    await discard(deps.runtime, record, turn.sessionID)
    before = spentSoFar()
    turn = await attemptRoute(record, false, deps)
  }
}

/** The attempts on the record's current route: a rerun after a server loss, retries after a transient failure. */
async function attemptRoute(record: TaskRecord, attach: boolean, deps: AttemptDeps): Promise<Turn> {
  // The attempts' sessions and spending, written with the next update (a progress line, the settling).
  const remember = (edit: (r: TaskRecord) => void) =>
    void deps.store.update(record, edit, { quiet: true, deferred: true })
  const forget = (r: TaskRecord) => {
    r.sessionID = undefined
  }
  let turn: Turn = { outcome: { kind: "aborted" } }
  for (let attempt = 0; attempt < (record.writable ? 1 : 2); attempt++) {
    if (attempt > 0) {
      deps.progress("the shared OpenCode server stopped; running the task again on a new one")
      remember(forget)
    }
    turn = await deps.turn(attach && attempt === 0)
    // What a lost or retried attempt spent counts: OpenCode took its transcript with it, the events did not.
    const spent = (r: TaskRecord) => settleSegment(spendingOf(r), turn.sessionID, turn.transcript)
    if (turn.outcome.kind === "lost") {
      remember(spent)
      continue
    }
    for (let retries = 0; ; retries++) {
      const failure = classifyTurn(turn)
      const delayMs = retryDelay({
        failure,
        writable: record.writable,
        produced: Boolean(turn.transcript?.text || turn.transcript?.tools.length),
        retries,
        msLeft: record.deadline - Date.now(),
      })
      if (delayMs === undefined || deps.signal.aborted) break
      const when = `in ${Math.round(delayMs / 1000)}s (retry ${retries + 1} of ${TRANSIENT_RETRIES})`
      deps.progress(`${failure?.kind}: running the task again in a new session ${when}`)
      remember(spent)
      await discard(deps.runtime, record, turn.sessionID)
      remember(forget)
      await abortableSleep(delayMs, deps.signal)
      turn = await deps.turn(false)
      if (turn.outcome.kind === "lost") break
    }
    break
  }
  return turn
}

/**
 * The routes a turn may still move to: a task's first turn only. A task_continue turn carries a conversation
 * a fresh session on another model would lose, so its refusal is its result.
 */
export const routesLeft = (record: TaskRecord) => (record.turns === 1 ? record.fallbacks : undefined)

/** Removes the session of a failed attempt about to be run again (a read-only task: nothing of it is kept). */
async function discard(runtime: Runtime, record: TaskRecord, sessionID: string | undefined) {
  if (!sessionID) return
  // Best effort: a session left behind is an idle, failed conversation, and retention removes it later.
  const { client } = await runtime.opencode().catch(() => ({ client: undefined }))
  if (client) await removeSession(client, sessionID, record.workspace)
}

/** The failure of a turn as settle would classify it (before the evidence and disposal). */
function classifyTurn(turn: Turn) {
  const status = statusOf(turn.outcome, turn.transcript, turn.overBudget)
  const error = turn.outcome.kind === "error" ? turn.outcome.error : undefined
  const text = turn.outcome.kind === "error" ? turn.outcome.message : turn.transcript?.error
  return classifyFailure({
    status,
    error: error ?? turn.transcript?.fault,
    text,
    overBudget: turn.overBudget !== undefined,
  })
}

/** Resolves after `ms`, or at once when the signal aborts (a cancel during a backoff). */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener("abort", done, { once: true })
  })
}
