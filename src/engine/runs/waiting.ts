// Waiting on a task: woken by the task itself when this process follows it, else by polling the
// record another process writes. `wait` answers at the next change (task_status); `follow` stays
// until the end, passing on each progress line (a delegating tool call within its sync budget).
import type { Runs } from "./runs"
import { isFinished, type TaskRecord } from "../records"

export interface FollowOptions {
  /** Stop waiting after this long (default: until the task finishes). */
  budgetMs?: number
  /** Stop waiting once it aborts; the task itself goes on (cancelling it is the caller's choice). */
  signal?: AbortSignal
  /** Each progress line of a task this process follows, as it comes. */
  onProgress?: (line: string) => void
}

/** The followed record, else the stored one. */
const current = async (runs: Runs, id: string) => runs.live.get(id)?.record ?? (await runs.store.read(id))

/** Waits until the task changes after `revision` (progress or the end) or the time is up. */
export async function wait(runs: Runs, id: string, waitMs: number, revision?: number): Promise<TaskRecord | undefined> {
  const live = runs.live.get(id)
  const record = await current(runs, id)
  if (!record || isFinished(record.status) || waitMs <= 0 || (revision !== undefined && record.revision > revision))
    return record
  if (live)
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        live.listeners.delete(done)
        resolve(live.record)
      }
      const timer = setTimeout(done, waitMs)
      live.listeners.add(done)
    })
  // Followed by another process: poll its record.
  const deadline = Date.now() + waitMs
  while (Date.now() < deadline) {
    await Bun.sleep(250)
    const polled = await runs.store.read(id)
    if (!polled || isFinished(polled.status) || polled.revision !== record.revision) return polled
  }
  return runs.store.read(id)
}

/** Waits until the task finishes, the budget is spent or the signal aborts; the task's record then. */
export async function follow(runs: Runs, id: string, options: FollowOptions = {}): Promise<TaskRecord | undefined> {
  const { budgetMs = Infinity, signal, onProgress } = options
  const started = Date.now()
  // Progress is heard from a task followed when the wait starts; another process's task is polled.
  const live = runs.live.get(id)
  let wake = () => {}
  const listener = (line?: string) => (line ? onProgress?.(line) : wake())
  const onAbort = () => wake()
  live?.listeners.add(listener)
  signal?.addEventListener("abort", onAbort, { once: true })
  try {
    while (Date.now() - started < budgetMs && !signal?.aborted) {
      const record = await current(runs, id)
      if (record && isFinished(record.status)) break
      const remaining = budgetMs - (Date.now() - started)
      if (live)
        await new Promise<void>((resolve) => {
          // No timer for an unbounded wait: setTimeout turns Infinity into 1 ms.
          const timer = Number.isFinite(remaining) ? setTimeout(done, remaining) : undefined
          function done() {
            clearTimeout(timer)
            resolve()
          }
          wake = done
          if (!runs.live.has(id) || signal?.aborted) done()
        })
      else await wait(runs, id, Math.min(remaining, 5000), record?.revision)
    }
  } finally {
    live?.listeners.delete(listener)
    signal?.removeEventListener("abort", onAbort)
  }
  return current(runs, id)
}
