// The task lifecycle: every delegation is a task with a record on disk. start() checks the budget,
// takes the writer state for writable work, writes the record, and runs the turn in the background
// of this process; a tool call waits on it only as long as its sync budget allows. settle() turns
// the turn into a result, measures what changed with git, and releases the workspace only once the
// session is confirmed removed (a never-run fork keeps the conversation for task_continue).
import type { Config, Role } from "../config/schema"
import { timeoutLimits } from "../config/schema"
import { AppError, describe, fail } from "../errors"
import { checkRoute, readCatalog } from "../opencode/catalog"
import { probeServer } from "../opencode/server"
import { forkSession, removeSession } from "../opencode/session"
import { hostContext } from "../sandbox"
import { checkStateSpace } from "../util/fs"
import { selfStart } from "../util/process"
import { autorunFiles } from "../workspace/autorun"
import { snapshot } from "../workspace/changes"
import { canonicalWorkspace } from "../workspace/root"
import { planBudget } from "./budgets"
import { resolveRoute, runTurn, statusOf, type Turn } from "./delegate"
import { measureEvidence, nextStep } from "./evidence"
import { autorunWarning } from "../workspace/autorun"
import { lockedError, orphaned, WriterLocks } from "./locks"
import { prune } from "./retention"
import { fromTranscript, type Status } from "./result"
import type { Runtime } from "./runtime"
import { isFinished, newTaskId, noteProgress, TaskStore, type TaskRecord } from "./tasks"

export interface StartRequest {
  role: Role
  agent: string
  cwd: string
  brief: string
  /** Short title; the task id is appended so a session can be found again after a restart. */
  title: string
  model?: string
  variant?: string
  writable: boolean
  idempotencyKey?: string
  /** This operation's deadline instead of the role's (tests, runner options). */
  timeoutMs?: number
  commandTimeoutS?: number
}

export interface Live {
  record: TaskRecord
  controller: AbortController
  done: Promise<TaskRecord>
  /** Called with each progress line, and with no line when the task settles. */
  listeners: Set<(line?: string) => void>
}

export class Delegations {
  readonly store: TaskStore
  readonly locks: WriterLocks
  readonly live = new Map<string, Live>()
  private pruned = false
  /** Task ids whose task_continue is between its checks and its launch. */
  private continuing = new Set<string>()
  /** Set by recovery (recovery.ts); every entry point waits for it first. */
  recovering: Promise<void> = Promise.resolve()
  /** Settles a task left behind by a dead process; installed by recovery.ts. */
  reconcile: (holder: { taskID: string; workspace: string }) => Promise<void> = async () => {}

  constructor(
    readonly runtime: Runtime,
    /** Called before each task's turn starts (serve starts its watchdog on the first). */
    private readonly onLaunch: () => void = () => {},
  ) {
    this.store = new TaskStore(runtime.paths.tasksDir)
    this.locks = new WriterLocks(runtime.paths.locksDir)
  }

  /** Starts a task, or returns the task already started under the same idempotency key. */
  async start(request: StartRequest): Promise<{ record: TaskRecord; attached: boolean }> {
    await this.recovering
    const size = Buffer.byteLength(request.brief)
    if (size > this.runtime.flags.maxBriefBytes)
      throw fail("Usage", `The brief is ${size} bytes; at most ${this.runtime.flags.maxBriefBytes} are accepted.`, "Shorten it: point at files by path instead of pasting them (or raise OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES, up to 1048576).")
    await checkStateSpace(this.runtime.paths.stateDir)
    const config = await this.runtime.config()
    // Admission first: a refused directory gets no record, lock or session, and no other task's answer.
    const host = this.hostOf(config)
    const workspace = await canonicalWorkspace(request.cwd, host, config)
    if (request.idempotencyKey) {
      const existing = await this.store.findByKey(request.idempotencyKey)
      if (existing) {
        // A key names one delegation: the same role in the same workspace, never another's report.
        if (existing.role !== request.role || existing.workspace !== workspace)
          throw fail("Usage", `idempotency_key "${request.idempotencyKey}" belongs to ${existing.role} task ${existing.id} in ${existing.workspace}.`, "Use a new key for a different delegation.")
        return { record: this.live.get(existing.id)?.record ?? existing, attached: true }
      }
    }
    // Before any lock or session: an impossible budget fails here, naming the operation and reserve.
    const budget = planBudget({ operation: request.role, role: request.role, limits: timeoutLimits(config), bridgeTimeoutMs: this.runtime.flags.bridgeTimeoutMs, overrideMs: request.timeoutMs, commandTimeoutS: request.commandTimeoutS })
    const { route, explicit } = await resolveRoute(this.runtime, request.role, request.model, request.variant)
    // Fail closed before any lock or record: no session starts where file access would not be sandboxed.
    const { client } = await this.runtime.sandboxed(workspace)
    if (route) {
      // A model from config.json is checked too, before any session: OpenCode may have dropped it since install.
      try {
        checkRoute(await readCatalog(client, workspace), route)
      } catch (error) {
        if (explicit || !(error instanceof AppError)) throw error
        throw fail("Config", `config.json routes ${request.role} to a model OpenCode cannot use: ${error.message}`, `Edit models.${request.role} (or modelVariants.${request.role}) in ${this.runtime.paths.configFile}, or rerun \`opencode-mcp-orchestrator install\` to pick again; ${error.hint ?? ""}`.trim())
      }
    }
    const id = newTaskId()
    if (request.writable) await this.acquire(workspace, id)
    const now = new Date().toISOString()
    const record: TaskRecord = {
      version: 1,
      id,
      role: request.role,
      agent: request.agent,
      workspace,
      title: `${request.title} [${id}]`,
      writable: request.writable,
      status: "running",
      idempotencyKey: request.idempotencyKey,
      sessions: [],
      route,
      ownerPid: process.pid,
      ownerStart: selfStart(),
      turnStartedAt: now,
      brief: request.brief,
      createdAt: now,
      updatedAt: now,
      deadline: Date.now() + budget.operationMs,
      operationMs: budget.operationMs,
      turns: 1,
      revision: 0,
      progress: [],
    }
    try {
      record.snapshot = await snapshot(workspace, host)
      if (request.writable) record.autorun = await autorunFiles(workspace)
      await this.store.save(record)
    } catch (error) {
      if (request.writable) await this.locks.clear(workspace, id)
      throw error
    }
    this.launch(record, request.brief)
    return { record, attached: false }
  }

  /** Sends rework into a finished task's conversation; the task runs again under the same id. */
  async continue(id: string, brief: string, timeoutMs?: number): Promise<TaskRecord> {
    await this.recovering
    // Two task_continue calls for one task must not both start a turn: the second is refused.
    if (this.live.has(id) || this.continuing.has(id)) throw fail("Usage", `Task ${id} is already running a turn.`, "Wait for it with task_status (wait_seconds), or task_cancel it first.")
    this.continuing.add(id)
    try {
      const record = await this.store.read(id)
      if (!record) throw fail("Usage", `No task ${id}.`, "Call task_list for the known tasks.")
      if (!isFinished(record.status)) throw fail("Usage", `Task ${id} is still ${record.status}.`, "Wait for it with task_status (wait_seconds), or task_cancel it first.")
      if (!record.sessionID) throw fail("Usage", `Task ${id} has no session to continue (it ended before one was kept, or retention removed it).`, "Start a new worker or scout task with the rework as its brief.")
      const config = await this.runtime.config()
      const budget = planBudget({ operation: `task_continue (${record.role})`, role: record.role, limits: timeoutLimits(config), bridgeTimeoutMs: this.runtime.flags.bridgeTimeoutMs, overrideMs: timeoutMs })
      // Admitted again: the previous turn may have planted project plugins there.
      const host = this.hostOf(config)
      await canonicalWorkspace(record.workspace, host, config)
      if (record.writable) await this.acquire(record.workspace, id)
      try {
        Object.assign(record, { status: "running" as Status, ownerPid: process.pid, ownerStart: selfStart(), turnStartedAt: new Date().toISOString(), brief, deadline: Date.now() + budget.operationMs, operationMs: budget.operationMs, result: undefined, finishedAt: undefined, note: undefined })
        record.turns++
        record.revision++
        record.snapshot = await snapshot(record.workspace, host)
        if (record.writable) record.autorun = await autorunFiles(record.workspace)
        await this.store.save(record)
      } catch (error) {
        if (record.writable) await this.locks.clear(record.workspace, id)
        throw error
      }
      this.launch(record, brief)
      return record
    } finally {
      this.continuing.delete(id)
    }
  }

  /** What the sandbox needs to know of the host (HOME, credential stores, trusted roots) under this config. */
  private hostOf(config: Config) {
    return hostContext(this.runtime.flags, config.sandboxRuntime.trustedRoots)
  }

  /** Takes the writer state, reconciling a holder whose process died; refuses while anyone else holds it. */
  private async acquire(workspace: string, id: string) {
    for (let attempt = 0; attempt < 2; attempt++) {
      const taken = await this.locks.tryAcquire(workspace, id)
      if (taken.acquired) return
      // Even the task's own quarantined or preserved state holds: only a restart releases those.
      if (attempt === 0 && orphaned(taken.holder)) {
        await this.reconcile(taken.holder)
        continue
      }
      throw lockedError(taken.holder)
    }
  }

  launch(record: TaskRecord, brief: string, attach = false): Live {
    this.onLaunch()
    const live: Live = { record, controller: new AbortController(), listeners: new Set(), done: Promise.resolve(record) }
    this.live.set(record.id, live)
    live.done = this.drive(live, brief, attach)
    return live
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
      if (turn.outcome.kind !== "lost") break
    }
    try {
      return await this.settle(live, turn, started)
    } catch (error) {
      // Settling failed (the state dir is unwritable, git broke): the record still says how it ended.
      Object.assign(live.record, { status: "failed" as Status, finishedAt: new Date().toISOString(), note: `The task could not be settled: ${describe(error)}` })
      live.record.revision++
      await this.store.save(live.record).catch(() => undefined)
      for (const listener of live.listeners) listener()
      this.live.delete(live.record.id)
      return live.record
    }
  }

  /** One turn on the shared server, any failure to reach it folded into the outcome. */
  private async turn(live: Live, brief: string, attach: boolean): Promise<Turn> {
    const { record } = live
    try {
      const { client, hub, record: server } = attach ? await this.runtime.opencode() : await this.runtime.sandboxed(record.workspace)
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
            if (record.writable) await this.locks.set(record.workspace, record.id, "active", { sessionID })
          },
          onProgress: (line) => this.progress(live, line),
          serverGone: async () => (await probeServer(server)) === "gone",
        },
        brief,
      )
    } catch (error) {
      return { sessionID: record.sessionID, outcome: { kind: "error", message: describe(error) } }
    }
  }

  progress(live: Live, line: string) {
    noteProgress(live.record, line)
    void this.store.save(live.record).catch(() => undefined)
    for (const listener of live.listeners) listener(line)
  }

  /** The turn's result, the workspace measured, the session parked/removed/preserved, the writer state released. */
  async settle(live: Live, turn: Turn, started: number, forced?: { status: Status; note: string }): Promise<TaskRecord> {
    const { record } = live
    const { client } = await this.runtime.opencode().catch(() => ({ client: undefined }))
    const status = forced?.status ?? statusOf(turn.outcome, turn.transcript)
    const result = fromTranscript({ role: record.role, workspace: record.workspace, taskID: record.id, sessionID: turn.sessionID, durationMs: Date.now() - started, status }, turn.transcript)
    // The evidence (git, the runner's log, planted metadata) is measured while the session is parked.
    const evidence = this.runtime.config().then((config) => measureEvidence(record, turn.sessionID, this.runtime.paths.runsDir, this.hostOf(config)))
    if (turn.outcome.kind === "error") result.error = turn.outcome.message
    // OpenCode retries a failing provider until the deadline: say so, rather than a bare timeout.
    const retrying = status === "timed_out" ? record.progress.at(-1) : undefined
    if (retrying?.startsWith("retrying (")) result.error = `The deadline passed while OpenCode was ${retrying}: the provider kept failing.`
    const lost = turn.outcome.kind === "lost"
    if (lost) {
      result.error = "server_lost: the shared OpenCode server stopped while the task ran; nothing runs for it any more."
      result.next = record.writable
        ? "Edits made before the server stopped are kept (see files_changed); inspect them, then start a new worker for what is left. The next call starts a new server."
        : "Retried once on a new server, which stopped too; run `opencode-mcp-orchestrator doctor`, then retry."
    }
    // A full disk must not keep the workspace locked: a state that cannot be written is reported, and
    // the release (a removal) still happens.
    const unwritten: string[] = []
    const setLock = (...args: Parameters<WriterLocks["set"]>) => this.locks.set(...args).catch((error: unknown) => void unwritten.push(describe(error)))
    if (record.writable) await setLock(record.workspace, record.id, "cleaning", { sessionID: turn.sessionID })
    let release = true
    if (lost) {
      // The process that ran the session is gone: nothing can write here any more, so the workspace is free.
      record.sessionID = turn.sessionID
    } else if (turn.sessionID && this.runtime.flags.preserveSessions) {
      release = false
      result.transcript = `preserved session ${turn.sessionID}: opencode export ${turn.sessionID}`
      if (record.writable) await setLock(record.workspace, record.id, "preserved", { sessionID: turn.sessionID, reason: `session ${turn.sessionID} kept for diagnosis (${status})` })
    } else if (turn.sessionID && !record.writable) {
      // A read-only task holds no writer state, so its own (idle) session is what stays parked for
      // task_continue; only a writer's session must be confirmed removed before the workspace is free.
      record.sessionID = turn.sessionID
      result.transcript = `opencode export ${turn.sessionID} (the conversation, kept for task_continue)`
    } else if (turn.sessionID && client) {
      const parked = await forkSession(client, turn.sessionID, record.workspace)
      const removed = await removeSession(client, turn.sessionID, record.workspace)
      if (parked) {
        record.sessionID = parked
        record.sessions.push(parked)
        result.transcript = `opencode export ${parked} (the conversation, kept for task_continue)`
      } else record.sessionID = undefined
      if (!removed) {
        release = false
        const reason = `session ${turn.sessionID} could not be confirmed removed after the task ended (${status})`
        if (record.writable) await setLock(record.workspace, record.id, "quarantined", { sessionID: turn.sessionID, reason })
        result.next = `The workspace is quarantined: ${reason}. Check with opencode that the session is gone, inspect git status, then restart the MCP server.`
      }
    } else if (turn.late) {
      release = false
      const reason = `the task ended (${status}) while OpenCode was still creating its session; released once that session is removed`
      if (record.writable) await setLock(record.workspace, record.id, "quarantined", { reason })
      void this.reconcileLate(record, turn.late).catch(() => undefined)
    } else if (turn.sessionID) {
      release = false
      const reason = `OpenCode could not be reached to remove session ${turn.sessionID}`
      if (record.writable) await setLock(record.workspace, record.id, "quarantined", { sessionID: turn.sessionID, reason })
    }
    if (release && record.writable) await this.locks.clear(record.workspace, record.id)
    const { files, run, planted } = await evidence
    if (files) result.files = files
    if (run) result.run = run
    if (planted.length) {
      result.warnings = [autorunWarning(planted)]
      if (result.status === "succeeded") result.status = "needs_review"
    }
    if (!release && unwritten.length) result.warnings = [...(result.warnings ?? []), `The workspace's writer state could not be recorded: ${unwritten[0]}`]
    result.next ??= nextStep(result.status, record, forced?.note)
    Object.assign(record, { status: result.status, result, finishedAt: new Date().toISOString(), note: forced?.note })
    record.revision++
    const unsaved = await this.store.save(record).then(() => undefined, (error: unknown) => error)
    if (unsaved) {
      // The outcome is not lost: this process answers from memory and writes it once there is room.
      result.warnings = [...(result.warnings ?? []), `The task record could not be written: ${describe(unsaved)} This process keeps it and writes it as soon as there is room; until then other processes see the task as running.`]
      await this.store.save(record).catch(() => undefined)
    }
    for (const listener of live.listeners) listener()
    this.live.delete(record.id)
    // Once per process, with a connection at hand: drop old parked sessions and records (retention.ts).
    if (client && !this.pruned) {
      this.pruned = true
      void prune(this.store, client).catch(() => undefined)
    }
    return record
  }

  /** A session whose creation outlived its task: abort it, then remove (or preserve) it, then release the workspace. */
  private async reconcileLate(record: TaskRecord, late: Promise<string | undefined>) {
    const sessionID = await late
    if (!sessionID) return record.writable ? this.locks.clear(record.workspace, record.id) : undefined
    record.sessions.push(sessionID)
    record.revision++
    await this.store.save(record)
    const { client } = await this.runtime.opencode()
    await client.session.abort({ sessionID, directory: record.workspace }).catch(() => undefined)
    if (this.runtime.flags.preserveSessions) {
      if (record.writable) await this.locks.set(record.workspace, record.id, "preserved", { sessionID, reason: `session ${sessionID} kept for diagnosis (created after its task ended)` })
      return
    }
    if (await removeSession(client, sessionID, record.workspace)) {
      if (record.writable) await this.locks.clear(record.workspace, record.id)
    } else if (record.writable) await this.locks.set(record.workspace, record.id, "quarantined", { sessionID, reason: `session ${sessionID}, created after its task ended, could not be confirmed removed` })
  }

  /** Resolves once every task this process follows has settled (each ends by its deadline at the latest). */
  async settled(): Promise<void> {
    while (this.live.size > 0) await Promise.all([...this.live.values()].map((live) => live.done.catch(() => undefined)))
  }

  /** Cancels every task this process follows and waits for them to settle (tests, an orderly shutdown). */
  async shutdown(): Promise<void> {
    const running = [...this.live.values()]
    for (const live of running) live.controller.abort()
    await Promise.all(running.map((live) => live.done.catch(() => undefined)))
  }

  /** Cancels a task this process follows (or aborts another process's session); resolves once it settled. */
  async cancel(id: string): Promise<TaskRecord> {
    await this.recovering
    const live = this.live.get(id)
    if (live) {
      live.controller.abort()
      return live.done
    }
    const record = await this.store.read(id)
    if (!record) throw fail("Usage", `No task ${id}.`, "Call task_list for the known tasks.")
    if (isFinished(record.status)) return record
    if (record.sessionID) {
      const { client } = await this.runtime.opencode()
      await client.session.abort({ sessionID: record.sessionID, directory: record.workspace }).catch(() => undefined)
    }
    return (await this.wait(id, 5000, record.revision)) ?? record
  }

  /** Waits until the task changes after `revision` (progress or the end) or the time is up. */
  async wait(id: string, waitMs: number, revision?: number): Promise<TaskRecord | undefined> {
    const live = this.live.get(id)
    const current = live?.record ?? (await this.store.read(id))
    if (!current || isFinished(current.status) || waitMs <= 0 || (revision !== undefined && current.revision > revision)) return current
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
      const record = await this.store.read(id)
      if (!record || isFinished(record.status) || record.revision !== current.revision) return record
    }
    return this.store.read(id)
  }
}
