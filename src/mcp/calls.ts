// How a delegating tool call waits on its task: progress notifications while it runs, the result
// if it finishes within the sync budget, else `running` with the task id (the work goes on in this
// process). A `notifications/cancelled` for the call cancels the task; a client that merely went
// away does not, so the task finishes and its record says how. While the call waits, the task's
// permission asks and questions go to the person (relay.ts; on 2026-07-28 as rounds of `input_required`,
// input-rounds.ts); after it returned, they are refused.
import type { InputRequiredResult } from "@modelcontextprotocol/server"
import type { ContinuePolicy, Delegations, StartRequest } from "../engine/lifecycle"
import { isFinished, type TaskRecord } from "../engine/terms"
import { fail } from "../errors"
import type { Peer } from "./define"
import { answeredFlow, InputFlow, inputRound } from "./input-rounds"
import { foregroundRelay, type ForegroundRelay, RELAY_WAIT_MS } from "./relay"
import { delegationResult, progressReporter, runningResult, type Extra, type ResultReply } from "./replies"

export function syncBudget(peer: Peer, delegations: Delegations): Promise<number> {
  return delegations.syncBudgetMs(peer.name)
}

/**
 * What is left of the sync budget for a call that arrived at `arrivedAt`. The client's deadline runs from
 * the call's arrival, so the start (policy, readiness, the server's checks, the session: seconds on a
 * loaded machine) is spent from the budget; measured from the start's end, a slow start pushed `running`
 * past the client's deadline, and the parent got the client's timeout instead of the task id.
 */
export async function syncBudgetLeft(peer: Peer, delegations: Delegations, arrivedAt: number) {
  return Math.max(0, (await syncBudget(peer, delegations)) - (Date.now() - arrivedAt))
}

export function startAndFollow(
  peer: Peer,
  delegations: Delegations,
  request: StartRequest,
  extra: Extra,
): Promise<ResultReply | InputRequiredResult> {
  return followWithRelay(peer, delegations, extra, undefined, (relay) =>
    delegations.start({ ...request, relay }).then(({ record }) => record),
  )
}

/** task_continue: the rework's turn, followed like a new task's (the relay included). */
export function continueAndFollow(
  peer: Peer,
  delegations: Delegations,
  id: string,
  brief: string,
  extra: Extra,
  call: ContinuePolicy,
): Promise<ResultReply | InputRequiredResult> {
  return followWithRelay(peer, delegations, extra, id, (relay) => delegations.continue(id, brief, { relay, call }))
}

/**
 * Begins a task with the call's relay and follows it; the relay is detached when the call returns. A continued task
 * (`taskId`) is known before its turn begins, so its asks are counted from the start; a new one once it exists.
 */
async function followWithRelay(
  peer: Peer,
  delegations: Delegations,
  extra: Extra,
  taskId: string | undefined,
  begin: (relay: ForegroundRelay["relay"] | undefined) => Promise<TaskRecord>,
): Promise<ResultReply | InputRequiredResult> {
  const arrivedAt = Date.now()
  if (peer.rounds) return followInRounds(peer, peer.rounds, delegations, extra, taskId, begin, arrivedAt)
  let foreground: ForegroundRelay | undefined
  try {
    foreground = await relayFor(peer, delegations, extra, taskId)
    if (foreground && taskId) peer.gate.remember(taskId, foreground.ledger)
    const record = await begin(foreground?.relay)
    if (foreground && !taskId) peer.gate.remember(record.id, foreground.ledger)
    return await followTask(peer, delegations, record, extra, { arrivedAt })
  } finally {
    foreground?.detach()
  }
}

/**
 * The same on 2026-07-28: the first round begins the task with a flow's relay, a later one (`rounds.state`) answers
 * the asks the last round handed out; each follows the task until its result, `running`, or an ask for the person,
 * which it returns as `input_required` with the flow still open.
 */
async function followInRounds(
  peer: Peer,
  rounds: NonNullable<Peer["rounds"]>,
  delegations: Delegations,
  extra: Extra,
  taskId: string | undefined,
  begin: (relay: ForegroundRelay["relay"] | undefined) => Promise<TaskRecord>,
  arrivedAt: number,
): Promise<ResultReply | InputRequiredResult> {
  let flow: InputFlow | undefined
  let done = false
  try {
    let record: TaskRecord
    if (rounds.state) {
      flow = await answeredFlow(rounds.tool, rounds.state, extra.mcpReq.inputResponses, delegations)
      const found = await delegations.read(rounds.state.task)
      if (!found) throw fail("Usage", `No task ${rounds.state.task}.`, "Call task_list for the tasks there are.")
      record = found
    } else {
      const ledger = peer.gate.ledger(taskId)
      flow = new InputFlow(peer.gate, { waitMs: delegations.runtime.flags.relayWaitMs ?? RELAY_WAIT_MS, ledger })
      if (taskId) peer.gate.remember(taskId, ledger)
      record = await begin(flow.foreground.relay)
      if (!taskId) peer.gate.remember(record.id, ledger)
    }
    const asking = flow.asking()
    const followed = await awaitTask(peer, delegations, record, extra, { arrivedAt, interrupt: asking })
    if (asking.aborted && followed.record && !isFinished(followed.record.status) && !extra.mcpReq.signal.aborted) {
      done = true
      return await inputRound(flow, followed.record, rounds.tool)
    }
    return await handOver(delegations, followed.record ?? record, followed.waitedMs)
  } finally {
    // Every way out but a round handed to the client ends the flow: a cancelled round withdraws its open asks.
    if (!done) {
      if (extra.mcpReq.signal.aborted) flow?.cancel()
      flow?.end()
    }
  }
}
/**
 * The call's relay to the person, live for as long as the call may wait (its sync budget); a continued task keeps its
 * count of asks.
 */
async function relayFor(peer: Peer, delegations: Delegations, extra: Extra, taskId?: string) {
  const until = Date.now() + (await syncBudget(peer, delegations))
  return foregroundRelay(peer, extra, {
    until,
    waitMs: delegations.runtime.flags.relayWaitMs,
    ledger: taskId ? peer.gate.ledger(taskId) : undefined,
  })
}

/**
 * The finished task's result, or `running` once the sync budget (or `limitMs`) is spent, counted from
 * the call's arrival (`arrivedAt`, now when not given).
 */
export async function followTask(
  peer: Peer,
  delegations: Delegations,
  record: TaskRecord,
  extra: Extra,
  options: { limitMs?: number; arrivedAt?: number } = {},
): Promise<ResultReply> {
  const followed = await awaitTask(peer, delegations, record, extra, options)
  return handOver(delegations, followed.record ?? record, followed.waitedMs)
}

/**
 * Waits on the task as followTask does, and also stops when `interrupt` aborts (a round's ask for the person); the
 * record then, and how long the call waited.
 */
async function awaitTask(
  peer: Peer,
  delegations: Delegations,
  record: TaskRecord,
  extra: Extra,
  options: { limitMs?: number; arrivedAt?: number; interrupt?: AbortSignal },
): Promise<{ record: TaskRecord | undefined; waitedMs: number }> {
  const started = Date.now()
  const left = await syncBudgetLeft(peer, delegations, options.arrivedAt ?? started)
  const budgetMs = Math.min(options.limitMs ?? Infinity, left)
  const onAbort = () =>
    // Deferred: a closing connection aborts every handler too, and by then the server reports not connected.
    setTimeout(() => {
      if (peer.connected()) void delegations.cancel(record.id).catch(() => undefined)
    }, 0)
  const following = delegations.isFollowing(record.id)
  const signal = extra.mcpReq.signal
  // The cancellation may have arrived while the task was being started.
  if (signal.aborted) onAbort()
  else signal.addEventListener("abort", onAbort, { once: true })
  try {
    let final = await delegations.follow(record.id, {
      budgetMs,
      signal: options.interrupt ? AbortSignal.any([signal, options.interrupt]) : signal,
      onProgress: progressReporter(extra),
    })
    // Cancelled by a client that still listens: the answer is the cancelled task's result. A turn
    // later, as the deferred cancel: a connection that closed says so by then.
    if (signal.aborted && following) {
      await Bun.sleep(0)
      if (peer.connected()) final = await delegations.follow(record.id)
    }
    return { record: final, waitedMs: Date.now() - started }
  } finally {
    signal.removeEventListener("abort", onAbort)
  }
}

/** recordResult, noting that a finished task's result was handed to the parent: retention keeps an unread one. */
export async function handOver(delegations: Delegations, record: TaskRecord, waitedMs = 0): Promise<ResultReply> {
  const reply = recordResult(record, waitedMs)
  await delegations.resultRead(record)
  return reply
}

/** The task's answer; a finished task with no result is an internal error (thrown, as any failure is). */
export function recordResult(record: TaskRecord, waitedMs = 0): ResultReply {
  if (isFinished(record.status) && record.result) return delegationResult(record.result)
  if (isFinished(record.status))
    throw new Error(
      `Task ${record.id} ended ${record.status}${record.note ? `: ${record.note}` : ""}, without a result.`,
    )
  return runningResult(record, waitedMs)
}
