// The runs of this process: the engine's working parts, shared inside src/engine by the lifecycle
// (`Delegations`, the engine's one public face, lifecycle.ts) and recovery: the record store, the writer
// states, the tasks this process follows, and how a launched task is driven through its turn (turn.ts,
// attempts.ts) to its settling (settle.ts). Nothing outside src/engine holds the Runs.
import { describe } from "../../errors"
import { taskSessionBusy } from "../../opencode/busy"
import { probeServer } from "../../opencode/server"
import { knownAsks, withdrawPending, type OpenAsk } from "../../opencode/pending"
import type { Relay } from "../../policy/relay"
import { attemptTurn, routesLeft } from "./attempts"
import { runTurn, type Turn, Inbox, respondWaitMs } from "../turn"
import { WriterLocks, type Runtime, Slots, type Slot } from "../capacity"
import { noteProgress, type Status, type TaskRecord, TaskOwners, spendingOf } from "../records"
import { outputFollowUp, Settler, type Forced } from "../outcome"
import { taskFollowed, TaskStore } from "../store"

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

export class Runs {
  readonly store: TaskStore
  readonly locks: WriterLocks
  readonly slots: Slots
  /** Who drives each task (owners.ts): a task is launched, taken over or settled only under its claim. */
  readonly owners: TaskOwners
  /** The tasks this process follows, by id (recovery adds the ones it takes over). */
  readonly live = new Map<string, Live>()
  readonly inbox: Inbox
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
    this.inbox = new Inbox(this.store)
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
      const begun = (r: TaskRecord) =>
        Object.assign(r, { turnStartedAt: new Date().toISOString(), deadline: Date.now() + r.operationMs })
      // As for progress: the store keeps a state it could not write and writes it when it can.
      await this.store.update(record, begun).catch((error: unknown) => this.unsaved(record.id, error))
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
    const turn = await attemptTurn(record, attach, {
      runtime: this.runtime,
      store: this.store,
      signal: live.controller.signal,
      turn: (attached) => this.turn(live, brief, attached),
      progress: (line) => this.progress(live, line),
    })
    try {
      return await this.settle(live, turn, started)
    } catch (error) {
      // Settling failed (the state dir is unwritable, git broke): the record still says how it ended.
      const failed = (r: TaskRecord) =>
        Object.assign(r, {
          status: "failed" as Status,
          finishedAt: new Date().toISOString(),
          note: `The task could not be settled: ${describe(error)}`,
        })
      // The store keeps a state it could not write and writes it when it can (tasks.ts).
      await this.store.update(record, failed).catch(() => undefined)
      await this.unfollow(live)
      return record
    }
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
      if (attach) await this.inbox.forget(record)
      const task = { record, signal: live.controller.signal, progress: (line: string) => this.progress(live, line) }
      return await runTurn(
        {
          client,
          hub,
          workspace: record.workspace,
          agent: record.agent,
          title: record.title,
          route: record.route,
          system: record.userRole?.prompt,
          deadline: record.deadline,
          signal: live.controller.signal,
          sessionID: record.sessionID,
          scope: record.scope,
          attach,
          onSession: async (sessionID) => {
            await this.store.update(record, (r) => {
              r.sessionID = sessionID
              r.sessions.push(sessionID)
            })
            // Before the prompt goes out: a kill from here on leaves a slot held for the handover window.
            await live.slot?.touch().catch(() => undefined)
            if (record.writable) await this.locks.set(record.workspace, record.id, "active", { sessionID })
          },
          onProgress: task.progress,
          onActivity: (activity) =>
            this.remember(record, (r) => {
              r.activity = activity
            }),
          serverGone: async () => (await probeServer(server)) === "gone",
          relay: this.inbox.relay(task, live.relay, respondWaitMs(config)),
          spending: spendingOf(record),
          onAsk: (ask, open) => this.noteAsk(live, ask, open),
          openAsks: knownAsks(record.asks),
          caps: { tokens: config.maxTokensPerTask, cost: config.maxCostPerTask },
          refuseEarly: Boolean(routesLeft(record)?.length),
          // The turn counts its steps into the record's spending (usage.ts): saved, waking no waiter.
          onSpend: () =>
            this.store
              .update(record, () => {}, { quiet: true })
              .catch((error: unknown) => this.unsaved(record.id, error)),
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

  /**
   * Keeps the task's open asks in its record, so a process taking it over can answer them by id; settles once
   * written (a save that failed is logged, and the ask goes on: the person can still answer it).
   */
  private async noteAsk(live: Live, ask: OpenAsk, open: boolean): Promise<void> {
    const others = knownAsks(live.record.asks).filter((entry) => entry.id !== ask.id)
    const asked = (r: TaskRecord) => {
      r.asks = open ? [...others, ask] : others.length > 0 ? others : undefined
    }
    await this.store.update(live.record, asked).catch((error: unknown) => this.unsaved(live.record.id, error))
  }

  private progress(live: Live, line: string) {
    const noted = (r: TaskRecord) => noteProgress(r, line)
    void this.store.update(live.record, noted).catch((error: unknown) => this.unsaved(live.record.id, error))
    for (const listener of live.listeners) listener(line)
  }

  /** A change kept in memory and written with the next update: liveness, spending, the session named. */
  private remember(record: TaskRecord, edit: (record: TaskRecord) => void) {
    void this.store.update(record, edit, { quiet: true, deferred: true })
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
          await this.noteAsk(live, ask, false)
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
