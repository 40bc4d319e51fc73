// Questions waiting for the parent agent (waiting_input). When no person can be reached for a
// delegated agent's question (no elicitation, the call already returned `running`, the form
// dismissed) and the question may be answered by the parent (policy/relay-respond.ts), the task
// keeps running with the question in its record (`waiting`) for a bounded time (policy.respondWaitSeconds):
// task_respond answers it through the same OpenCode reply the relay uses (or the person does, through the
// form a client of the tasks extension shows for it: src/mcp/tasks.ts); no answer in time, a
// cancel or the deadline dismisses it as before. The waiter lives in the process that follows the
// task: a process taking a dead one's task over withdraws the question (turn.ts) and forgets it.
import type { Config } from "../../config/schema"
import { fail } from "../../errors"
import type { Ask } from "../../policy/asks"
import { describeAsk, NO_ELICITATION, type Relay, type Verdict } from "../../policy/relay"
import { shownAsk, type ShownAsk } from "../../policy/relay-bounds"
import { notForParent, readAnswer, takesFreeText } from "../../policy/relay-respond"
import { noteProgress, type TaskRecord, type WaitingInput, WaitingInputSchema } from "../records"
import type { TaskStore } from "../store"

/** The record's question waiting for task_respond, if it holds a well-formed one (a garbage one is none). */
export function waitingOf(record: TaskRecord): WaitingInput | undefined {
  const parsed = WaitingInputSchema.safeParse(record.waiting)
  return parsed.success ? parsed.data : undefined
}

/** How long a question waits for task_respond: only where config.json relays questions at all. */
export const respondWaitMs = (config: Config) =>
  config.policy.relay.includes("question") ? config.policy.respondWaitSeconds * 1000 : 0

interface Waiter {
  ask: Ask
  shown: ShownAsk
  /** Ends the wait with `verdict`; resolves once the record no longer holds the question. */
  settle(verdict: Verdict): Promise<void>
}

export interface InboxTask {
  record: TaskRecord
  /** Aborts when the task stops (cancel, deadline, shutdown): the wait ends with it. */
  signal: AbortSignal
  progress(line: string): void
}

export class Inbox {
  private readonly waiters = new Map<string, Waiter>()

  constructor(private readonly store: TaskStore) {}

  /**
   * The relay for a task's turn: `relay` (the person, when a call waits) first; a question no one could be
   * reached for then waits up to `waitMs` for task_respond.
   */
  relay(task: InboxTask, relay: Relay | undefined, waitMs: number): Relay {
    return async (ask, asking) => {
      const verdict = relay ? await relay(ask, asking) : NO_ELICITATION
      if (verdict.kind !== "refused" || !verdict.unreachable || ask.kind !== "question" || waitMs <= 0) return verdict
      const why = notForParent(ask)
      if (why) {
        task.progress(`not kept for task_respond: ${why}`)
        return verdict
      }
      // One question waits at a time; another is dismissed as before.
      if (this.waiters.has(task.record.id) || task.signal.aborted) return verdict
      return this.await(task, ask, verdict, Math.min(waitMs, task.record.deadline - Date.now()))
    }
  }

  private async await(task: InboxTask, ask: Ask, verdict: Verdict, waitMs: number): Promise<Verdict> {
    const { record } = task
    const shown = shownAsk(ask)
    const until = new Date(Date.now() + waitMs)
    const questions = shown.ask.kind === "question" ? shown.ask.questions : []
    const waiting: WaitingInput = {
      questions: questions.map((question) => ({
        question: question.question,
        header: question.header,
        options: question.options.map((option) => option.label),
        free: takesFreeText(ask),
      })),
      since: new Date().toISOString(),
      until: until.toISOString(),
    }
    const seconds = Math.round(waitMs / 1000)
    const { promise: cleared, resolve: clear } = Promise.withResolvers<void>()
    const { promise: answered, resolve } = Promise.withResolvers<Verdict | undefined>()
    const done = (value?: Verdict) => {
      clearTimeout(timer)
      task.signal.removeEventListener("abort", stop)
      this.waiters.delete(record.id)
      resolve(value)
    }
    const stop = () => done()
    const timer = setTimeout(stop, Math.max(0, waitMs))
    task.signal.addEventListener("abort", stop, { once: true })
    // Before the record shows the question: a task_respond that reads it finds the waiter.
    this.waiters.set(record.id, {
      ask,
      shown,
      settle: (value) => {
        done(value)
        return cleared
      },
    })
    await this.store
      .update(record, (r) => {
        r.waiting = waiting
      })
      .catch((error: unknown) => {
        // Unseen by the parent, the question would wait for nothing: it is dismissed (answerAsk says why).
        done()
        throw error
      })
    // Also to a call following the task in the foreground, as its progress.
    task.progress(`waiting for an answer through task_respond (up to ${seconds}s): ${describeAsk(ask)}`)
    const settled = await answered
    await this.store
      .update(record, (r) => {
        r.waiting = undefined
      })
      .finally(clear)
    if (settled) return settled
    if (verdict.kind !== "refused") return verdict
    const ended = task.signal.aborted ? "the task stopped while it waited for task_respond" : undefined
    return { ...verdict, reason: `${verdict.reason}; ${ended ?? `no answer through task_respond within ${seconds}s`}` }
  }

  /** Answers the question the task waits on; throws, saying what to do, when there is none or the answer is wrong. */
  answer(record: TaskRecord, answer: string): Promise<void> {
    const waiter = this.waiterOf(record)
    const read = readAnswer(waiter.shown, answer, waiter.ask)
    if ("wrong" in read) throw fail("Usage", read.wrong, read.next)
    return waiter.settle({ kind: "answered", answers: read.answers, by: "task_respond" })
  }

  /** The ask the task waits on in this process, for a client to put to the person (the tasks extension). */
  waitingAsk(id: string): Ask | undefined {
    return this.waiters.get(id)?.ask
  }

  /** Ends the task's wait with what the person said through the client's form; throws as answer does. */
  settle(record: TaskRecord, verdict: (ask: Ask) => Verdict): Promise<void> {
    const waiter = this.waiterOf(record)
    return waiter.settle(verdict(waiter.ask))
  }

  private waiterOf(record: TaskRecord): Waiter {
    const waiter = this.waiters.get(record.id)
    if (!waiter) {
      const elsewhere = waitingOf(record) !== undefined
      throw fail(
        "Usage",
        elsewhere
          ? `Task ${record.id} waits for an answer in another MCP server process (pid ${record.ownerPid}).`
          : `Task ${record.id} is not waiting for an answer (it is ${record.status}).`,
        elsewhere
          ? "Answer it through the client that started the task, or let the wait run out."
          : "Call task_status: task_respond answers only a task whose status shows waiting_input.",
      )
    }
    return waiter
  }

  /** A task taken over from a dead process: its question was withdrawn with the session's other asks. */
  async forget(record: TaskRecord): Promise<void> {
    if (record.waiting === undefined) return
    await this.store.update(record, (r) => {
      r.waiting = undefined
      noteProgress(r, "the question that waited for task_respond was withdrawn: its MCP server process stopped")
    })
  }
}
