// Work that must not run away (a backtracking regex, a quadratic loop) runs in a process of its own, so
// a deadline can stop it: the deadline only ends the wait, and the test asserts whether the work got to
// its end and what it printed, never how long it took (a loaded machine only moves the answer later).
import { run } from "../../src/util/process"

export interface Finished {
  /** The program exited by itself, with 0, before the deadline. */
  finished: boolean
  /** What it printed before it exited or was stopped. */
  stdout: string
  stderr: string
}

/** Runs `bun <args>`; `deadlineMs` only stops the wait, generous so that a loaded machine never meets it. */
export async function finishes(args: string[], deadlineMs: number): Promise<Finished> {
  const result = await run([process.execPath, ...args], { timeoutMs: deadlineMs, killGraceMs: 100 })
  return { finished: !result.timedOut && result.code === 0, stdout: result.stdout, stderr: result.stderr }
}

/**
 * Waits for `work` until `deadlineMs` passes; whether it arrived, and its value. The deadline only ends
 * the wait, generous so that a loaded machine never meets it: for work that stalls without end.
 */
export async function arrives<T>(work: Promise<T>, deadlineMs: number): Promise<{ arrived: boolean; value?: T }> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<{ arrived: false }>((resolve) => {
    timer = setTimeout(() => resolve({ arrived: false }), deadlineMs)
  })
  try {
    return await Promise.race([work.then((value) => ({ arrived: true, value })), late])
  } finally {
    clearTimeout(timer)
  }
}
