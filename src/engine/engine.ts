// The engine's working parts, shared inside src/engine by the lifecycle (its public face, lifecycle.ts)
// and recovery: the record store, the writer states, the tasks this process follows, and how a
// launched task is driven through its turn to its settling (settle.ts). Nothing outside src/engine
// holds an Engine; they go through Delegations.
import { describe } from "../errors"
import { taskSessionBusy } from "../opencode/busy"
import { probeServer } from "../opencode/server"
import { knownAsks, withdrawPending, type OpenAsk } from "../opencode/pending"
import { removeSession } from "../opencode/session"
import type { Relay } from "../policy/relay"
import { runTurn, statusOf, type Turn } from "./delegate"
import { classifyFailure, retryDelay, TRANSIENT_RETRIES } from "./failure"
import { WriterLocks } from "./locks"
import type { Status } from "./result"
import type { Runtime } from "./runtime"
import { TaskOwners } from "./owners"
import { outputFollowUp } from "./output-schema"
import { Settler, type Forced } from "./settle"
import { Slots, type Slot } from "./slots"
import { isFinished, noteProgress, TASK_ID, TaskStore, type TaskRecord } from "./tasks"
import { settleSegment, spendingOf } from "./usage"
import { sameProcess } from "../util/process"

/** A slot's or ticket's live holder holds while its task is unfinished and followed by it, or by nobody alive. */
async function taskFollowed(store: TaskStore, holder: { taskID: string; ownerPid: number }): Promise<boolean> {
  if (!TASK_ID.test(holder.taskID)) return false
  const record = await store.read(holder.taskID)
  if (!record || isFinished(record.status)) return false
  return record.ownerPid === holder.ownerPid || !sameProcess(record.ownerPid, record.ownerStart)
}

/** A task this process follows: its record in memory, how to abort it, and who listens. */
export interface Live {
  record: TaskRecord
  controller: AbortController
  done: Promise<TaskRecord>
  /** Called with each progress line, and with no line when the task settles. */
  listeners: Set<(line?: string) => void>
  /** Who answers the session's asks while a tool call waits on it; in memory only, never in the record. */
  relay?: Relay
  /** A delegate_parallel member: its turn waits for a machine-wide slot (slots.ts) first. */
  queued?: boolean
  /** The machine-wide slot this turn holds, once it has one. */
  slot?: Slot
}

export class Engine {
  readonly store: TaskStore
  readonly locks: WriterLocks
  readonly slots: Slots
  /** Who drives each task (owners.ts): a task is launched, taken over or settled only under its claim. */
  readonly owners: TaskOwners
  /** The tasks this process follows, by id (recovery adds the ones it takes over). */
  readonly live = new Map<string, Live>()
  private readonly settler: Settler

  constructor(
    readonly runtime: Runtime,
    /** Called before each task's turn starts (serve starts its watchdog on the first). */
    private readonly onLaunch: () => void = () => {},
  ) {
    this.store = new TaskStore(runtime.paths.tasksDir)
    this.locks = new WriterLocks(runtime.paths.locksDir)
    this.owners = new TaskOwners(runtime.paths.ownersDir)
    this.slots = new Slots(
      runtime.paths.slotsDir,
      async () => (await runtime.config()).maxParallel,
      (taskID, workspace) => taskSessionBusy(runtime.paths, taskID, workspace),
      (holder) => taskFollowed(this.store, holder),
    )
    this.settler = new Settler(runtime, this.store, this.locks)
  }

  /**
   * Follows the task and runs its turn in the background; `attach` follows a session already busy. A
   * queued task (a delegate_parallel member) holds a machine-wide slot for its turn.
   */
  launch(record: TaskRecord, brief: string, attach = false, relay?: Relay, queued = false): Live {
    this.onLaunch()
    const live: Live = {
      record,
      controller: new AbortController(),
      listeners: new Set(),
      done: Promise.resolve(record),
      relay,
      queued,
    }
    this.live.set(record.id, live)
    live.done = queued ? this.driveInSlot(live, brief, attach) : this.drive(live, brief, attach)
    return live
  }

  /**
   * A queued task: takes over the slot a dead process held for it (its session may still run), else
   * waits for one and runs with its whole budget from then on; frees the slot once settled. A session
   * already busy is followed at once: its slot was never freed while it ran (slots.ts).
   */
  private async driveInSlot(live: Live, brief: string, attach: boolean): Promise<TaskRecord> {
    const { record } = live
    const unslotted = (error: unknown) => {
      // The cap cannot be kept without the state dir; the task runs rather than waiting forever.
      this.progress(live, `running without a concurrency slot: ${describe(error)}`)
      return undefined
    }
    const adopted = await this.slots.adopt(record.id, record.workspace).catch(unslotted)
    const slot =
      adopted ??
      (attach
        ? undefined
        : await this.slots
            .take(record.id, record.workspace, live.controller.signal, (ahead) =>
              this.progress(live, `queued (${ahead} ahead)`),
            )
            .catch(unslotted))
    live.slot = slot
    if (slot && !adopted) {
      Object.assign(record, { turnStartedAt: new Date().toISOString(), deadline: Date.now() + record.operationMs })
      record.revision++
      // As for progress: the store keeps a state it could not write and writes it when it can.
      await this.store.save(record).catch((error: unknown) => this.unsaved(record.id, error))
    }
    try {
      return await this.drive(live, brief, attach)
    } finally {
      // A slot whose file cannot be removed stays held only until this process exits (slots.ts reclaims it).
      await slot?.release().catch(() => undefined)
    }
  }

  /** Settles a followed task (settle.ts), then tells its listeners and stops following it. */
  async settle(live: Live, turn: Turn, started: number, forced?: Forced): Promise<TaskRecord> {
    const record = await this.settler.settle(live.record, turn, started, forced)
    await this.unfollow(live)
    return record
  }

  /** Stops following a settled task and gives up its claim: the record on disk says how it ended. */
  private async unfollow(live: Live) {
    for (const listener of live.listeners) listener()
    this.live.delete(live.record.id)
    // A claim left behind is taken back from this process once it is gone (owners.ts).
    await this.owners.release(live.record.id).catch(() => undefined)
  }

  private async drive(live: Live, brief: string, attach: boolean): Promise<TaskRecord> {
    const { record } = live
    // From the record, not from now: a task re-attached after a restart has run since its turn began.
    const started = Date.parse(record.turnStartedAt ?? record.createdAt)
    let turn: Turn = { outcome: { kind: "aborted" } }
    // A read-only task whose server died is run again once on the new server; a writer never is (its
    // edits so far are in the workspace, and the parent decides what happens next).
    for (let attempt = 0; attempt < (record.writable ? 1 : 2); attempt++) {
      if (attempt > 0) {
        this.progress(live, "the shared OpenCode server stopped; running the task again on a new one")
        record.sessionID = undefined
      }
      turn = await this.turn(live, brief, attach && attempt === 0)
      if (turn.outcome.kind === "lost") {
        // What the lost session spent counts: OpenCode took its transcript with it, the events did not.
        settleSegment(spendingOf(record), turn.sessionID, turn.transcript)
        continue
      }
      // A read-only task that failed on a transient provider error before producing anything is run
      // again in a fresh session, after a backoff (failure.ts retryDelay decides); a writer never is.
      for (let retries = 0; ; retries++) {
        const delayMs = retryDelay({
          failure: classifyTurn(turn),
          writable: record.writable,
          produced: Boolean(turn.transcript?.text || turn.transcript?.tools.length),
          retries,
          msLeft: record.deadline - Date.now(),
        })
        if (delayMs === undefined || live.controller.signal.aborted) break
        const kind = classifyTurn(turn)?.kind
        this.progress(
          live,
          `${kind}: running the task again in a new session in ${Math.round(delayMs / 1000)}s (retry ${retries + 1} of ${TRANSIENT_RETRIES})`,
        )
        settleSegment(spendingOf(record), turn.sessionID, turn.transcript)
        await this.discard(record, turn.sessionID)
        record.sessionID = undefined
        await abortableSleep(delayMs, live.controller.signal)
        turn = await this.turn(live, brief, false)
        if (turn.outcome.kind === "lost") break
      }
      break
    }
    try {
      return await this.settle(live, turn, started)
    } catch (error) {
      // Settling failed (the state dir is unwritable, git broke): the record still says how it ended.
      Object.assign(record, {
        status: "failed" as Status,
        finishedAt: new Date().toISOString(),
        note: `The task could not be settled: ${describe(error)}`,
      })
      record.revision++
      // The store keeps a state it could not write and writes it when it can (tasks.ts).
      await this.store.save(record).catch(() => undefined)
      await this.unfollow(live)
      return record
    }
  }

  /** Removes the session of a failed attempt about to be run again (a read-only task: nothing of it is kept). */
  private async discard(record: TaskRecord, sessionID: string | undefined) {
    if (!sessionID) return
    // Best effort: a session left behind is an idle, failed conversation, and retention removes it later.
    const { client } = await this.runtime.opencode().catch(() => ({ client: undefined }))
    if (client) await removeSession(client, sessionID, record.workspace)
  }

  /** One turn on the shared server, any failure to reach it folded into the outcome. */
  private async turn(live: Live, brief: string, attach: boolean): Promise<Turn> {
    const { record } = live
    // The shared server's instance for the workspace stays while the turn runs (instances.ts).
    const release = await this.runtime.instances.hold(record.workspace)
    try {
      const {
        client,
        hub,
        record: server,
      } = attach ? await this.runtime.opencode() : await this.runtime.sandboxed(record.workspace)
      const config = await this.runtime.config()
      return await runTurn(
        {
          client,
          hub,
          workspace: record.workspace,
          agent: record.agent,
          title: record.title,
          route: record.route,
          deadline: record.deadline,
          signal: live.controller.signal,
          sessionID: record.sessionID,
          attach,
          onSession: async (sessionID) => {
            record.sessionID = sessionID
            record.sessions.push(sessionID)
            record.revision++
            await this.store.save(record)
            // Before the prompt goes out: a kill from here on leaves a slot held for the handover window.
            await live.slot?.touch().catch(() => undefined)
            if (record.writable) await this.locks.set(record.workspace, record.id, "active", { sessionID })
          },
          onProgress: (line) => this.progress(live, line),
          onActivity: (activity) => {
            record.activity = activity
          },
          serverGone: async () => (await probeServer(server)) === "gone",
          relay: live.relay,
          spending: spendingOf(record),
          onAsk: (ask, open) => this.noteAsk(live, ask, open),
          openAsks: knownAsks(record.asks),
          caps: { tokens: config.maxTokensPerTask, cost: config.maxCostPerTask },
          onSpend: () => this.store.save(record).catch((error: unknown) => this.unsaved(record.id, error)),
          followUp: record.outputSchema && ((text) => outputFollowUp(record.outputSchema!, text)),
        },
        brief,
      )
    } catch (error) {
      return { sessionID: record.sessionID, outcome: { kind: "error", message: describe(error) } }
    } finally {
      await release()
    }
  }

  /** Keeps the task's open asks in its record, so a process taking it over can answer them by id. */
  private noteAsk(live: Live, ask: OpenAsk, open: boolean) {
    const others = knownAsks(live.record.asks).filter((entry) => entry.id !== ask.id)
    live.record.asks = open ? [...others, ask] : others.length > 0 ? others : undefined
    live.record.revision++
    void this.store.save(live.record).catch((error: unknown) => this.unsaved(live.record.id, error))
  }

  private progress(live: Live, line: string) {
    noteProgress(live.record, line)
    void this.store.save(live.record).catch((error: unknown) => this.unsaved(live.record.id, error))
    for (const listener of live.listeners) listener(line)
  }

  /** Tasks whose failed progress save was logged: once each, since a full disk fails every later one too. */
  private logged = new Set<string>()

  /** A progress save that failed is logged (stderr); the store keeps the state and writes it once it can. */
  private unsaved(id: string, error: unknown) {
    if (this.logged.has(id)) return
    this.logged.add(id)
    console.error(`opencode-mcp-orchestrator: progress of task ${id} not saved: ${describe(error)}`)
  }

  /** Resolves once every followed task has settled (each ends by its deadline at the latest). */
  async settled(): Promise<void> {
    // A task that fails settling records that itself (drive); here only the waiting matters.
    while (this.live.size > 0)
      await Promise.all([...this.live.values()].map((task) => task.done.catch(() => undefined)))
  }

  /** Withdraws the asks open in every followed task's sessions, with `reason` (this process is leaving). */
  async withdrawAsks(reason: string): Promise<void> {
    const tasks = [...this.live.values()].filter((live) => live.record.sessions.length > 0)
    // Leaving: the server these sessions run on, or none (a dead server took its asks with it).
    const client = this.runtime.current()?.client
    if (tasks.length === 0 || !client) return
    await Promise.all(
      tasks.map(async (live) => {
        for (const { ask, line } of await withdrawPending(
          client,
          live.record.workspace,
          live.record.sessions,
          reason,
          knownAsks(live.record.asks),
        )) {
          this.noteAsk(live, ask, false)
          this.progress(live, line)
        }
        // Written before this process exits (the store chains a task's writes); a failure is logged by progress.
        await this.store.save(live.record).catch(() => undefined)
      }),
    )
  }

  /** Cancels every followed task and waits for them to settle. */
  async shutdown(): Promise<void> {
    const running = [...this.live.values()]
    for (const live of running) live.controller.abort()
    // As above: each task records how it ended.
    await Promise.all(running.map((live) => live.done.catch(() => undefined)))
  }
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
