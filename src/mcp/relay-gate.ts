// How many asks reach the person at once: a person answers one form at a time, so a task has one
// open and a few waiting behind it (in the order they were asked), the server has a few open across
// its tasks, and a task has a bounded number in its life. An ask over a bound is not put to the
// person: it is refused at once with a reason the agent reads (src/opencode/policy.ts), so an agent
// that asks 25 questions in one step learns to ask one thing at a time instead of queueing 25 forms.
// One gate per MCP connection (server.ts); a task's ledger follows it from call to task_continue.
import { RELAY_BOUNDS, type RelayBounds } from "../policy/relay-bounds"

/** One task's asks: how many it has put (its life), and how many are open now. */
export interface AskLedger {
  asked: number
  open: number
}

interface Waiter {
  ledger: AskLedger
  admit: () => void
}

/** Keep the ledgers of this many recent tasks: a month of tasks must not cost memory. */
const REMEMBERED_TASKS = 1000

export class RelayGate {
  private open = 0
  private readonly waiting: Waiter[] = []
  private readonly ledgers = new Map<string, AskLedger>()

  constructor(readonly bounds: RelayBounds = RELAY_BOUNDS) {}

  /** The ledger of task `id` (a task_continue), or a fresh one for a task not started yet. */
  ledger(id?: string): AskLedger {
    return (id && this.ledgers.get(id)) || { asked: 0, open: 0 }
  }

  /** Files a new task's ledger under its id once the id exists. */
  remember(id: string, ledger: AskLedger) {
    this.ledgers.delete(id)
    this.ledgers.set(id, ledger)
    for (const oldest of this.ledgers.keys()) {
      if (this.ledgers.size <= REMEMBERED_TASKS) break
      this.ledgers.delete(oldest)
    }
  }

  /**
   * Waits for a form slot for one ask of `ledger`'s task. Resolves to a release function once the
   * ask may go out, or to the reason it may not (a bound, or `signal` aborting while it waited).
   */
  async enter(ledger: AskLedger, signal: AbortSignal): Promise<{ release: () => void } | { refused: string }> {
    const { asksPerTask, openPerTask, waitingPerTask } = this.bounds
    if (ledger.asked >= asksPerTask)
      return {
        refused:
          `this task has already put ${asksPerTask} asks to the person, the most one task may; report what ` +
          `you still need instead of asking`,
      }
    const queued = ledger.open + this.waiting.filter((waiter) => waiter.ledger === ledger).length
    if (queued >= openPerTask + waitingPerTask)
      return {
        refused:
          `${queued} asks from this task are already open or waiting for the person, the most at once; ask ` +
          `one thing at a time, after the answers`,
      }
    ledger.asked++
    const { promise: admitted, resolve } = Promise.withResolvers<"admitted">()
    const waiter: Waiter = { ledger, admit: () => resolve("admitted") }
    this.waiting.push(waiter)
    this.pump()
    const aborted = new Promise<"aborted">((resolve) => {
      if (signal.aborted) resolve("aborted")
      signal.addEventListener("abort", () => resolve("aborted"), { once: true })
    })
    if ((await Promise.race([admitted, aborted])) === "aborted") {
      const index = this.waiting.indexOf(waiter)
      // Still waiting: it leaves the line. Admitted in the same turn as the abort: the slot goes back.
      if (index >= 0) this.waiting.splice(index, 1)
      else this.leave(ledger)
      return { refused: "aborted" }
    }
    let released = false
    return {
      release: () => {
        if (released) return
        released = true
        this.leave(ledger)
      },
    }
  }

  /** Admits waiters in order while the task and the server have room. */
  private pump() {
    for (let i = 0; i < this.waiting.length && this.open < this.bounds.openPerProcess; ) {
      const waiter = this.waiting[i]!
      if (waiter.ledger.open >= this.bounds.openPerTask) {
        i++
        continue
      }
      this.waiting.splice(i, 1)
      waiter.ledger.open++
      this.open++
      waiter.admit()
    }
  }

  private leave(ledger: AskLedger) {
    ledger.open--
    this.open--
    this.pump()
  }
}
