// Whether and when a failed read-only turn runs again by itself: a bounded exponential backoff, or the
// provider's own retry-after, within what is left of the task's deadline.
import type { Failure } from "./failure"

/** Automatic retries of a read-only task after a transient failure, on top of the first attempt. */
export const TRANSIENT_RETRIES = 2
const BACKOFF_BASE_MS = 2000
const BACKOFF_CAP_MS = 30_000
/** A retry needs this much of the deadline left after its wait, or it would only time out. */
const RETRY_MARGIN_MS = 10_000

export interface RetryFacts {
  failure: Failure | undefined
  writable: boolean
  /** The failed attempt answered or ran tools: running it again would repeat visible work. */
  produced: boolean
  /** Automatic retries already made for this turn. */
  retries: number
  /** Milliseconds left before the task's deadline. */
  msLeft: number
}

/**
 * How long to wait before running a failed read-only turn again, or undefined when it must not be:
 * a writer never is (its edits are in the workspace, and the parent decides), nor a turn that had
 * produced output, nor a failure that retrying unchanged cannot fix.
 */
export function retryDelay(facts: RetryFacts): number | undefined {
  const { failure } = facts
  if (
    !failure?.transient ||
    failure.kind === "server_lost" ||
    facts.writable ||
    facts.produced ||
    facts.retries >= TRANSIENT_RETRIES
  )
    return undefined
  const delayMs = Math.min(
    BACKOFF_CAP_MS,
    failure.retryAfterS !== undefined ? failure.retryAfterS * 1000 : BACKOFF_BASE_MS * 2 ** facts.retries,
  )
  return facts.msLeft - delayMs >= RETRY_MARGIN_MS ? delayMs : undefined
}
