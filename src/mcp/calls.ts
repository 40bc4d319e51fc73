// How a delegating tool call waits on its task: progress notifications while it runs, the result
// if it finishes within the sync budget, else `running` with the task id (the work goes on in this
// process). A `notifications/cancelled` for the call cancels the task; a client that merely went
// away does not, so the task finishes and its record says how. While the call waits, the task's
// permission asks and questions go to the person (relay.ts); after it returned, they are refused.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { ContinuePolicy, Delegations, StartRequest } from "../engine/lifecycle"
import { isFinished, type TaskRecord } from "../engine/tasks"
import { foregroundRelay, type ForegroundRelay } from "./relay"
import { gateOf } from "./relay-gate"
import { delegationResult, progressReporter, runningResult, type Extra, type ResultReply } from "./replies"
import { returnsAtOnce } from "./task-scope"

export async function syncBudget(server: McpServer, delegations: Delegations): Promise<number> {
  // A call made as an MCP task returns its task at once; the client polls tasks/get (tasks.ts).
  if (returnsAtOnce()) return 0
  return delegations.syncBudgetMs(server.server.getClientVersion()?.name)
}

export function startAndFollow(
  server: McpServer,
  delegations: Delegations,
  request: StartRequest,
  extra: Extra,
): Promise<ResultReply> {
  return followWithRelay(server, delegations, extra, undefined, (relay) =>
    delegations.start({ ...request, relay }).then(({ record }) => record),
  )
}

/** task_continue: the rework's turn, followed like a new task's (the relay included). */
export function continueAndFollow(
  server: McpServer,
  delegations: Delegations,
  id: string,
  brief: string,
  extra: Extra,
  call: ContinuePolicy,
): Promise<ResultReply> {
  return followWithRelay(server, delegations, extra, id, (relay) =>
    delegations.continue(id, brief, undefined, relay, call),
  )
}

/**
 * Begins a task with the call's relay and follows it; the relay is detached when the call returns. A continued task
 * (`taskId`) is known before its turn begins, so its asks are counted from the start; a new one once it exists.
 */
async function followWithRelay(
  server: McpServer,
  delegations: Delegations,
  extra: Extra,
  taskId: string | undefined,
  begin: (relay: ForegroundRelay["relay"] | undefined) => Promise<TaskRecord>,
): Promise<ResultReply> {
  let foreground: ForegroundRelay | undefined
  try {
    foreground = await relayFor(server, delegations, extra, taskId)
    if (foreground && taskId) gateOf(server).remember(taskId, foreground.ledger)
    const record = await begin(foreground?.relay)
    if (foreground && !taskId) gateOf(server).remember(record.id, foreground.ledger)
    return await followTask(server, delegations, record, extra)
  } finally {
    foreground?.detach()
  }
}

/**
 * The call's relay to the person, live for as long as the call may wait (its sync budget); a continued task keeps its
 * count of asks.
 */
async function relayFor(server: McpServer, delegations: Delegations, extra: Extra, taskId?: string) {
  const until = Date.now() + (await syncBudget(server, delegations))
  return foregroundRelay(server, extra, {
    until,
    waitMs: delegations.runtime.flags.relayWaitMs,
    ledger: taskId ? gateOf(server).ledger(taskId) : undefined,
  })
}

/** The finished task's result, or `running` once the sync budget (or `limitMs`) is spent. */
export async function followTask(
  server: McpServer,
  delegations: Delegations,
  record: TaskRecord,
  extra: Extra,
  limitMs?: number,
): Promise<ResultReply> {
  const budgetMs = Math.min(limitMs ?? Infinity, await syncBudget(server, delegations))
  const started = Date.now()
  const onAbort = () =>
    // Deferred: a closing connection aborts every handler too, and by then the server reports not connected.
    setTimeout(() => {
      if (server.isConnected()) void delegations.cancel(record.id).catch(() => undefined)
    }, 0)
  const following = delegations.isFollowing(record.id)
  // The cancellation may have arrived while the task was being started.
  if (extra.signal.aborted) onAbort()
  else extra.signal.addEventListener("abort", onAbort, { once: true })
  try {
    let final = await delegations.follow(record.id, {
      budgetMs,
      signal: extra.signal,
      onProgress: progressReporter(extra),
    })
    // Cancelled by a client that still listens: the answer is the cancelled task's result. A turn
    // later, as the deferred cancel: a connection that closed says so by then.
    if (extra.signal.aborted && following) {
      await Bun.sleep(0)
      if (server.isConnected()) final = await delegations.follow(record.id)
    }
    return recordResult(final ?? record, Date.now() - started)
  } finally {
    extra.signal.removeEventListener("abort", onAbort)
  }
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
