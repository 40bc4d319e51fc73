// A tool call made as an MCP task (tasks.ts) starts its delegation and returns at once: within this
// scope the delegating tools' sync budget is zero, so they hand back the task id instead of waiting.
// A scope rather than an argument, so the tools themselves stay unaware of the task protocol.
import { AsyncLocalStorage } from "node:async_hooks"

const scope = new AsyncLocalStorage<true>()

/** Runs `work` (a tool handler) so that it starts its delegation and returns without waiting on it. */
export function withoutWaiting<T>(work: () => Promise<T>): Promise<T> {
  return scope.run(true, work)
}

/** True inside `withoutWaiting`: the call's sync budget is zero. */
export function returnsAtOnce(): boolean {
  return scope.getStore() === true
}
