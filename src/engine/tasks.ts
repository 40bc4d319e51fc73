// The task store: one JSON record per delegation under the state dir, written before its session
// starts and rewritten (atomically) on every change, so a restarted MCP server, another MCP server
// process or a person with `cat` can see every task that was ever started and how it ended.
import { randomBytes } from "node:crypto"
import { readdir, rm } from "node:fs/promises"
import type { Role } from "../config/schema"
import { fail } from "../errors"
import type { OpenAsk } from "../opencode/pending"
import type { ModelRoute } from "../opencode/session"
import { writeJson } from "../util/fs"
import { selfStart } from "../util/process"
import { readState, type SetAside } from "../util/state-file"
import type { Snapshot } from "../workspace/changes"
import type { PolicyDecision } from "./policy"
import type { Activity } from "./progress"
import { RecordSchema } from "./record-schema"
import type { Fallback } from "./routing"
import type { DelegationResult, Status } from "./result"
import { type IndexQuery, type LedgerRecord, TaskIndex } from "./task-index"
import { type Page, TaskViews } from "./task-views"
import type { Spending } from "./usage"

export const FINISHED: readonly Status[] = [
  "succeeded",
  "failed",
  "timed_out",
  "cancelled",
  "needs_review",
  "interrupted",
]
/** Progress lines kept in a record (the newest); the full story is in the session. */
const PROGRESS_KEPT = 40

export interface TaskRecord {
  version: 1
  id: string
  role: Role
  agent: string
  workspace: string
  title: string
  /** Writable tasks hold the workspace's writer state while they run. */
  writable: boolean
  status: Status
  idempotencyKey?: string
  /** The session currently holding the conversation (the running one, or the parked copy once finished). */
  sessionID?: string
  /** Every session this task has used, oldest first: a person can `opencode export` any that still exists. */
  sessions: string[]
  route?: ModelRoute
  /** config.json's routes after `route`, not yet tried (routing.ts): the next is tried on a refusal before any step. */
  fallbacks?: ModelRoute[]
  /** The routes this task left, oldest first, each with why and what it spent there. */
  fallbackFrom?: Fallback[]
  /** PID of the MCP server process following the task. */
  ownerPid: number
  /** That process's boot and start time (util/process.ts processStart), so a reused PID is not taken for it. */
  ownerStart?: string
  createdAt: string
  /** When the running (or last) turn began; durations are measured from it. */
  turnStartedAt?: string
  updatedAt: string
  finishedAt?: string
  /** Epoch ms at which the running turn's session is aborted. */
  deadline: number
  operationMs: number
  /** The running turn's brief, so a process that takes the task over can send it if it never went out. */
  brief?: string
  /** 1 for the first brief, +1 per task_continue. */
  turns: number
  /** Bumped on every change, so a waiter can tell "something happened" from "nothing happened". */
  revision: number
  progress: string[]
  /** The running turn's liveness: current step, last tool and target, time of the latest event. */
  activity?: Activity
  /** Git state of the workspace when the running turn started: files changed are measured against it. */
  snapshot?: Snapshot
  /** An isolated worker: `workspace` is its worktree, `source` the caller's workspace, its edits the patch `patchId`. */
  isolation?: { mode: "worktree"; source: string; patchId: string }
  /** worker only: the command this server runs on the result after every turn (verify.ts). */
  verify?: string
  /** A delegate_parallel member: its first turn counts against maxParallel in whichever process follows it. */
  parallel?: true
  /** What the policy gate decided for each call, the first and every task_continue, oldest first. */
  calls?: Array<PolicyDecision & { turn: number }>
  /** Found before the running turn started (a weakened mode): added to its result's warnings. */
  turnWarnings?: string[]
  /** Asks raised and not yet answered (opencode/pending.ts): whoever takes the task over answers them by id. */
  asks?: OpenAsk[]
  /** Autorun files (workspace/autorun.ts) with their fingerprints when a writable turn started. */
  autorun?: Record<string, string>
  result?: DelegationResult
  /** What the task has spent over all its sessions and turns (usage.ts): the result's tokens and cost, and what the caps count. */
  spending?: Spending
  /** Why the task ended as it did, when the status alone does not say. */
  note?: string
}

export const isFinished = (status: Status) => FINISHED.includes(status)

type NewRecordFields = Pick<
  TaskRecord,
  | "id"
  | "role"
  | "agent"
  | "workspace"
  | "title"
  | "writable"
  | "idempotencyKey"
  | "route"
  | "fallbacks"
  | "brief"
  | "operationMs"
  | "parallel"
>

/** Refuses a task_continue for a task that cannot take one, saying what to do instead. */
export function checkContinuable(record: TaskRecord | undefined, id: string): asserts record is TaskRecord {
  if (!record) throw fail("Usage", `No task ${id}.`, "Call task_list for the known tasks.")
  if (!isFinished(record.status))
    throw fail(
      "Usage",
      `Task ${id} is still ${record.status}.`,
      "Wait for it with task_status (wait_seconds), or task_cancel it first.",
    )
  if (!record.sessionID)
    throw fail(
      "Usage",
      `Task ${id} has no session to continue (it ended before one was kept, or retention removed it).`,
      "Start a new worker or scout task with the rework as its brief.",
    )
}

/**
 * The record of a finished task, running again for a task_continue turn with `brief`, followed by
 * this process: an edit for TaskStore.update.
 */
export function nextTurn(record: TaskRecord, brief: string, operationMs: number): void {
  Object.assign(record, {
    status: "running",
    ownerPid: process.pid,
    ownerStart: selfStart(),
    turnStartedAt: new Date().toISOString(),
    brief,
    deadline: Date.now() + operationMs,
    operationMs,
  })
  // A continued turn is not queued (lifecycle.ts), so nothing that takes it over queues it either.
  Object.assign(record, {
    result: undefined,
    finishedAt: undefined,
    note: undefined,
    activity: undefined,
    parallel: undefined,
  })
  record.turnWarnings = undefined
  record.turns++
}

/** A new task's record, followed by this process, its first turn starting now. */
export function newRecord(
  request: Pick<TaskRecord, "role" | "agent" | "title" | "writable" | "idempotencyKey" | "brief">,
  fields: Omit<NewRecordFields, keyof typeof request> & Pick<TaskRecord, "isolation" | "verify">,
): TaskRecord {
  const now = new Date().toISOString()
  const { role, agent, title, writable, idempotencyKey, brief } = request
  return {
    version: 1,
    ...fields,
    role,
    agent,
    writable,
    idempotencyKey,
    brief,
    // The task id in the title is how a session is found again after a restart.
    title: `${title} [${fields.id}]`,
    status: "running",
    sessions: [],
    ownerPid: process.pid,
    ownerStart: selfStart(),
    createdAt: now,
    turnStartedAt: now,
    updatedAt: now,
    deadline: Date.now() + fields.operationMs,
    turns: 1,
    revision: 0,
    progress: [],
  }
}

const CORRUPT_FIX =
  "The task it held (if any) is no longer listed; inspect the moved file, and delete it once you no longer need it."

export const TASK_ID = /^task_[a-z0-9]+_[a-f0-9]+$/

export const newTaskId = () => `task_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`

export function checkTaskId(id: string): void {
  if (!TASK_ID.test(id))
    throw fail(
      "Usage",
      `"${id.slice(0, 80)}" is not a task id.`,
      "Pass the task_id a delegation returned, or call task_list.",
    )
}

/** How an update lands (TaskStore.update). */
export interface UpdateHow {
  /** Wakes no waiter: the revision stays (spending counted, liveness). */
  quiet?: boolean
  /** Kept in memory and written with the next update or save (with `quiet`: liveness, spending). */
  deferred?: boolean
}

/** Record files read at once by a full listing. */
const READ_BATCH = 256

const isRecordName = (name: string) => name.endsWith(".json") && TASK_ID.test(name.slice(0, -5))

export class TaskStore {
  /** Per-task write chain: writes land in order, and a burst of progress collapses into the latest state. */
  private writes = new Map<string, { running: Promise<void>; pending?: TaskRecord }>()
  /**
   * The latest state of each record that could not be written (a full disk): this process answers from
   * it, and writes it again every few seconds until it lands, so no outcome is lost to a full disk.
   */
  private unsaved = new Map<string, TaskRecord>()
  private retry?: ReturnType<typeof setInterval>
  private readonly unreported: SetAside[] = []

  /** Listings through the records' index (task-index.ts, task-views.ts); a failed index means a full scan. */
  readonly views: TaskViews

  constructor(readonly dir: string) {
    const finished = (status: string) => isFinished(status as Status)
    const index = new TaskIndex(dir, finished, (id) => this.load(this.file(id), id), isRecordName)
    const held = () => [...this.unsaved.values()].map((record) => structuredClone(record))
    this.views = new TaskViews(index, { read: (id) => this.read(id), scan: () => this.list(), held, finished })
  }

  file(id: string) {
    checkTaskId(id)
    return `${this.dir}/${id}.json`
  }

  async read(id: string): Promise<TaskRecord | undefined> {
    const kept = this.unsaved.get(id)
    return kept ? structuredClone(kept) : this.load(this.file(id), id)
  }

  private async load(path: string, id: string): Promise<TaskRecord | undefined> {
    const named = (record: { id: string }) =>
      record.id === id ? undefined : `its id ${JSON.stringify(record.id)} is not its file name's ${id}`
    const { value, setAside } = await readState(path, RecordSchema, CORRUPT_FIX, named)
    // Bounded: a process nobody lists from keeps the newest (each was also logged when set aside).
    if (setAside && this.unreported.push(setAside) > 50) this.unreported.shift()
    return value as TaskRecord | undefined
  }

  /**
   * The records this store set aside since the last call, each returned once: a listing (task_list,
   * stats) reports them, whichever read found them (a task_status, the recovery sweep, a listing).
   */
  takeSetAside(): SetAside[] {
    return this.unreported.splice(0)
  }

  /** Writes now and resolves once this state (or a newer one) is on disk. */
  save(record: TaskRecord): Promise<void> {
    record.updatedAt = new Date().toISOString()
    const snapshot = structuredClone(record)
    const slot = this.writes.get(record.id)
    if (slot) {
      slot.pending = snapshot
      return slot.running
    }
    const entry: { running: Promise<void>; pending?: TaskRecord } = { running: Promise.resolve() }
    entry.running = (async () => {
      let next: TaskRecord | undefined = snapshot
      try {
        while (next) {
          const landing = next
          const intent = await this.views.gate.indexed((index) => index.intend(landing.id))
          await writeJson(this.file(next.id), next, 0o600).catch(async (error: unknown) => {
            // Nothing changed on disk (the write is atomic): the intent is void.
            if (intent !== undefined) await this.views.gate.indexed((index) => index.forget(intent))
            throw error
          })
          this.unsaved.delete(next.id)
          await this.views.gate.indexed((index) => index.put(landing, intent))
          next = entry.pending
          entry.pending = undefined
        }
      } catch (error) {
        this.keep(entry.pending ?? next!)
        throw error
      } finally {
        // A failed write (disk full, permissions) must not wedge every later save of this task.
        this.writes.delete(record.id)
      }
    })()
    this.writes.set(record.id, entry)
    return entry.running
  }

  /**
   * The one way a record changes: `edit` is applied to `record` itself (the object this process
   * follows and answers from), then the revision is bumped, the time stamped and the record saved, so
   * what the engine holds and what is written never differ by an edit. `quiet`: no waiter wakes for it
   * (spending counted), the revision stays. `deferred`: liveness that changes on every event, kept in
   * memory and written with the next update.
   */
  update(record: TaskRecord, edit: (record: TaskRecord) => unknown, how: UpdateHow = {}): Promise<void> {
    edit(record)
    if (!how.quiet) record.revision++
    record.updatedAt = new Date().toISOString()
    return how.deferred ? Promise.resolve() : this.save(record)
  }

  /** Resolves once every record this process could not write has been written, or after `ms`. */
  async flushed(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms
    while (this.unsaved.size > 0 && Date.now() < deadline) await Bun.sleep(250)
    return this.unsaved.size === 0
  }

  private keep(record: TaskRecord) {
    this.unsaved.set(record.id, record)
    this.retry ??= setInterval(() => {
      if (this.unsaved.size === 0) {
        clearInterval(this.retry)
        this.retry = undefined
        return
      }
      // Still failing is expected until there is room; each failure keeps the state for the next try.
      for (const kept of this.unsaved.values())
        if (!this.writes.has(kept.id)) void this.save(structuredClone(kept)).catch(() => undefined)
    }, 2000)
  }

  /** Every record, each file read: for readers that need them all (retention, doctor, the sessions listing). */
  async list(): Promise<TaskRecord[]> {
    // No tasks directory yet: no tasks.
    const names = await readdir(this.dir).catch(() => [] as string[])
    const ids = new Set(names.filter(isRecordName).map((name) => name.slice(0, -5)))
    for (const id of this.unsaved.keys()) ids.add(id)
    // A few hundred files open at a time: all at once, 100,000 records ran out of descriptors (EMFILE).
    const all = [...ids]
    const records: (TaskRecord | undefined)[] = []
    for (let at = 0; at < all.length; at += READ_BATCH)
      records.push(...(await Promise.all(all.slice(at, at + READ_BATCH).map((id) => this.read(id)))))
    return records
      .filter((record): record is TaskRecord => record !== undefined)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
  }

  async findByKey(key: string): Promise<TaskRecord | undefined> {
    return this.views.byKey(key)
  }

  /** The records matching `query`, newest first, read through the index: the files of the page only. */
  page(query: IndexQuery): Promise<Page> {
    return this.views.page(query)
  }

  /** Tasks not finished (what recovery and the lane audit look at), read through the index. */
  async unfinished(): Promise<TaskRecord[]> {
    return (await this.views.page({ unfinished: true })).records
  }

  /** What the ledger sums, from the index rows. */
  ledger(): Promise<LedgerRecord[]> {
    return this.views.ledger()
  }

  /** Removes a record (retention): its file, then its row. */
  async remove(id: string): Promise<void> {
    const intent = await this.views.gate.indexed((index) => index.intend(id))
    await rm(this.file(id), { force: true })
    await this.views.gate.indexed((index) => index.drop(id, intent))
  }
}

/** Appends a progress line, keeping the newest: an edit for TaskStore.update. */
export function noteProgress(record: TaskRecord, line: string) {
  record.progress.push(line)
  if (record.progress.length > PROGRESS_KEPT) record.progress.splice(0, record.progress.length - PROGRESS_KEPT)
}
