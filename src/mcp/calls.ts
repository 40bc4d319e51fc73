// How a delegating tool call waits on its task: progress notifications while it runs, the result
// if it finishes within the sync budget, else `running` with the task id (the work goes on in this
// process). A `notifications/cancelled` for the call cancels the task; a client that merely went
// away does not, so the task finishes and its record says how.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { timeoutLimits } from "../config/schema"
import { knownClient, syncBudgetMs } from "../engine/budgets"
import type { Delegations, StartRequest } from "../engine/lifecycle"
import { isFinished, type TaskRecord } from "../engine/tasks"
import { delegationResult, errorResult, progressReporter, runningResult, type Extra } from "./shared"

export async function syncBudget(server: McpServer, delegations: Delegations): Promise<number> {
  const config = await delegations.runtime.config()
  const clientName = server.server.getClientVersion()?.name
  const known = knownClient(clientName)
  return syncBudgetMs({
    parentS: timeoutLimits(config).parent,
    clientName,
    // Our installer writes the parent timeout into the client's registration (Codex tool_timeout_sec).
    registrationRaised: known !== undefined && (config.integrations as string[]).includes(known),
    overrideMs: delegations.runtime.flags.syncBudgetMs,
  })
}

export async function startAndFollow(server: McpServer, delegations: Delegations, request: StartRequest, extra: Extra): Promise<CallToolResult> {
  try {
    const { record } = await delegations.start(request)
    return await followTask(server, delegations, record, extra)
  } catch (error) {
    return errorResult(error)
  }
}

/** The finished task's result, or `running` once the sync budget (or `limitMs`) is spent. */
export async function followTask(server: McpServer, delegations: Delegations, record: TaskRecord, extra: Extra, limitMs?: number): Promise<CallToolResult> {
  const budget = Math.min(limitMs ?? Infinity, await syncBudget(server, delegations))
  const started = Date.now()
  const live = delegations.live.get(record.id)
  const report = progressReporter(extra)
  let wake: () => void = () => {}
  const listener = (line?: string) => {
    if (line) report(line)
    else wake()
  }
  const onAbort = () =>
    // Deferred: a closing connection aborts every handler too, and by then the server reports not connected.
    setTimeout(() => {
      if (server.isConnected()) void delegations.cancel(record.id).catch(() => undefined)
      wake()
    }, 0)
  live?.listeners.add(listener)
  // The cancellation may have arrived while the task was being started.
  if (extra.signal.aborted) onAbort()
  else extra.signal.addEventListener("abort", onAbort, { once: true })
  try {
    while (Date.now() - started < budget && !extra.signal.aborted) {
      const current = delegations.live.get(record.id)?.record ?? (await delegations.store.read(record.id)) ?? record
      if (isFinished(current.status)) break
      const remaining = budget - (Date.now() - started)
      if (live) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, remaining)
          function done() {
            clearTimeout(timer)
            resolve()
          }
          wake = done
          if (!delegations.live.has(record.id)) done()
        })
      } else await delegations.wait(record.id, Math.min(remaining, 5000), current.revision)
    }
    if (extra.signal.aborted && live) {
      await Bun.sleep(0)
      if (server.isConnected()) await live.done
    }
  } finally {
    live?.listeners.delete(listener)
    extra.signal.removeEventListener("abort", onAbort)
  }
  const final = delegations.live.get(record.id)?.record ?? (await delegations.store.read(record.id)) ?? record
  return recordResult(final, Date.now() - started)
}

export function recordResult(record: TaskRecord, waitedMs = 0): CallToolResult {
  if (isFinished(record.status) && record.result) return delegationResult(record.result)
  if (isFinished(record.status))
    return errorResult(new Error(`Task ${record.id} ended ${record.status}${record.note ? `: ${record.note}` : ""}, without a result.`))
  return runningResult(record, waitedMs)
}
