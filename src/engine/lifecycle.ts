// The task lifecycle, the engine's public face: every delegation is a task with a record on disk.
// start() (starting.ts) checks the budget, takes the writer state for writable work, writes the record, and runs
// the turn in the background of this process (runs.ts); a tool call follows it only as long as its
// sync budget allows. Settling (settle.ts) releases the workspace only once the session is confirmed
// removed. With `recover`, tasks and writer states a dead process left are taken over first (recovery.ts).
import { timeoutLimits } from "../config/schema"
import { fail } from "../errors"
import { abortSession } from "../opencode/session"
import type { SetAside } from "../util/state-file"
import type { Ask } from "../policy/asks"
import type { Verdict } from "../policy/relay"
import {
  knownClient,
  syncBudgetMs,
  gatePolicy,
  policyReport,
  type PolicyOptions,
  type PolicyRequest,
  type StartRequest,
} from "./admission"
import { type ContinueCall, continueTask } from "./continuing"
import { startTask } from "./starting"
import { Runs, acquireWriter, recoverAll, follow, wait, type FollowOptions } from "./runs"
import { Reclaims, type Runtime } from "./capacity"
import { listTasks, type Listing, type TaskQuery } from "./listing"
import { isFinished, type PolicyDecision, type TaskRecord } from "./records"
import { Groups } from "./parallel"
import { Patches } from "./patches"
import { reviewTargetRequest, type ReviewTarget } from "./review-cwd"
import { RetentionSchedule, expireApplied } from "./retention"
import type { PatchRecord } from "../workspace/patches"
import type { IndexQuery, LedgerRecord, Stats } from "./ledger"
import type { Page } from "./store"

export type { ContinuePolicy, StartRequest } from "./admission"

export interface DelegationOptions {
  /** Take over the tasks and writer states a dead process left (an MCP server, its watchdog). */
  recover?: boolean
  /** Called before each task's turn starts (serve starts its watchdog on the first). */
  onLaunch?: () => void
  /** Run retention on a schedule (schedule.ts): every long-lived process does. */
  retention?: boolean
}

export class Delegations {
  private readonly runs: Runs
  /** Task ids whose task_continue is between its checks and its launch. */
  private readonly continuing = new Set<string>()
  /** Recovery, when asked for (recovery.ts); every entry point waits for it first. */
  private readonly recovering?: Promise<void>
  /** Cancels asked of this process and still settling, whatever their outcome (cancelsSettled). */
  private readonly cancelling = new Set<Promise<unknown>>()
  readonly retention?: RetentionSchedule
  /** The patch use cases: show, apply, discard (patches.ts). */
  readonly patches: Patches
  /** The delegate_parallel use cases: start, open, follow a group and compare its patches (parallel.ts). */
  readonly groups: Groups
  /** Lanes this process took back, until a listing reports them (once each). */
  readonly reclaims = new Reclaims()

  constructor(
    readonly runtime: Runtime,
    options: DelegationOptions = {},
  ) {
    this.runs = new Runs(runtime, options.onLaunch)
    // The use cases call back into the lifecycle (its writer state, reads, starts), each through its deps.
    this.patches = new Patches(this)
    this.groups = new Groups(this)
    if (options.recover) this.recovering = recoverAll(this.runs)
    if (!options.retention) return
    // A patch that could not be expired (its writer state held, say) stays for the next pass.
    const expire = (record: PatchRecord) => expireApplied(this, record).catch(() => false)
    this.retention = new RetentionSchedule(runtime, this.runs.store, expire, this.recovering ?? Promise.resolve())
    this.retention.start()
  }

  /** Starts a task, or returns the task already started under the same idempotency key (starting.ts). */
  async start(request: StartRequest): Promise<{ record: TaskRecord; attached: boolean }> {
    await this.recovering
    return startTask(
      { runs: this.runs, runtime: this.runtime, reclaims: this.reclaims, recovers: this.recovering !== undefined },
      request,
    )
  }

  /** The scout start reviewing a stored patch in its worktree or a cwd's uncommitted changes (review-cwd.ts). */
  reviewRequest(target: ReviewTarget, brief: string): Promise<StartRequest> {
    const place = async () => {
      const config = await this.runtime.config()
      const host = this.runtime.host(config)
      return { host, config, maxBriefBytes: this.runtime.flags.maxBriefBytes }
    }
    return reviewTargetRequest(this.runtime.paths.patchesDir, place, target, brief)
  }

  /**
   * The policy gate (policy.ts) every call that runs an agent passes, a new one or a continue: the
   * decision, or the refusal thrown. delegate_parallel asks it for every member before starting any.
   */
  check(request: PolicyRequest): Promise<PolicyDecision> {
    return gatePolicy(this.runtime, request)
  }

  /** The policy a call in `cwd` (stating `mode`) would meet, shown instead of enforced (the policy tool). */
  policy(cwd: string, options: PolicyOptions = {}) {
    return policyReport(this.runtime, cwd, options)
  }

  /**
   * Sends rework into a finished task's conversation; the task runs again under the same id, once it
   * passed what a new call passes (continuing.ts).
   */
  async continue(id: string, brief: string, options: Partial<ContinueCall> = {}) {
    await this.recovering
    const deps = {
      runs: this.runs,
      runtime: this.runtime,
      continuing: this.continuing,
      recovers: this.recovering !== undefined,
    }
    return continueTask(deps, id, brief, { ...options, call: options.call ?? {} })
  }

  /** Runs `work` holding the workspace's writer state as `holder` (patch_apply): refused while a writer holds it. */
  async holding<T>(workspace: string, holder: string, work: () => Promise<T>): Promise<T> {
    await this.recovering
    await this.acquire(workspace, holder)
    try {
      return await work()
    } finally {
      await this.runs.locks.clear(workspace, holder)
    }
  }

  /** Takes the writer state (launching.ts), reconciling a dead holder when this process recovers. */
  private acquire(workspace: string, id: string) {
    return acquireWriter(this.runs, workspace, id, this.recovering !== undefined)
  }

  /** Cancels a task this process follows (or aborts another process's session); resolves once it settled. */
  async cancel(id: string): Promise<TaskRecord> {
    return (await this.cancelTask(id)).record
  }

  /** Cancels the task unless it had already finished, and says which: a finished one is left as it was. */
  cancelTask(id: string): Promise<{ record: TaskRecord; alreadyFinished: boolean }> {
    const settling = this.cancelNow(id)
    // The caller is told how the cancel failed; here only that it ended counts.
    const tracked = settling.catch(() => undefined)
    this.cancelling.add(tracked)
    void tracked.then(() => this.cancelling.delete(tracked))
    return settling
  }

  /**
   * Resolves once every cancel asked of this process so far has settled, or after `ms` (serve, its client gone: a
   * cancel the client sent before it left ends the task cancelled, as asked, before this process stops).
   */
  async cancelsSettled(ms: number): Promise<void> {
    if (this.cancelling.size === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))
    await Promise.race([Promise.all(this.cancelling), late])
    clearTimeout(timer)
  }

  private async cancelNow(id: string): Promise<{ record: TaskRecord; alreadyFinished: boolean }> {
    await this.recovering
    const live = this.runs.live.get(id)
    if (live && isFinished(live.record.status)) return { record: live.record, alreadyFinished: true }
    if (live) {
      // Asked, on disk, before anything stops: a kill from here on leaves the cancel for the process that
      // takes the task over (recovery.ts). A record that cannot be written is still cancelled here.
      const asked = (r: TaskRecord) => Object.assign(r, { cancelAskedAt: r.cancelAskedAt ?? new Date().toISOString() })
      await this.runs.store.update(live.record, asked, { quiet: true }).catch(() => undefined)
      live.controller.abort()
      return { record: await live.done, alreadyFinished: false }
    }
    const record = await this.runs.store.read(id)
    if (!record) throw fail("Usage", `No task ${id}.`, "Call task_list for the known tasks.")
    if (isFinished(record.status)) return { record, alreadyFinished: true }
    if (record.sessionID) {
      const { client } = await this.runtime.opencode()
      await abortSession(client, record.sessionID, record.workspace)
    }
    return { record: (await this.wait(id, 5000, record.revision)) ?? record, alreadyFinished: false }
  }

  /** Answers the question the task waits on (inbox.ts); its record then. Throws when it waits on none. */
  async respond(id: string, answer: string): Promise<TaskRecord> {
    const record = await this.read(id)
    if (!record) throw fail("Usage", `No task ${id}.`, "Call task_list for the known tasks.")
    await this.runs.inbox.answer(record, answer)
    return record
  }

  /** The ask task `id` waits on in this process (a question kept for task_respond), for a client's form. */
  waitingAsk(id: string): Ask | undefined {
    return this.runs.inbox.waitingAsk(id)
  }

  /** Ends the wait of task `id` with the person's reply through a client's form, as `verdict` reads it. */
  async settleAsk(id: string, verdict: (ask: Ask) => Verdict): Promise<TaskRecord> {
    const record = await this.read(id)
    if (!record) throw fail("Usage", `No task ${id}.`, "Call task_list for the known tasks.")
    await this.runs.inbox.settle(record, verdict)
    return record
  }

  /** Waits until the task changes after `revision` (progress or the end) or the time is up. */
  wait(id: string, waitMs: number, revision?: number): Promise<TaskRecord | undefined> {
    return wait(this.runs, id, waitMs, revision)
  }

  /** How long a call from this client waits for its task before it answers `running` (budgets.ts). */
  async syncBudgetMs(clientName: string | undefined): Promise<number> {
    const config = await this.runtime.config()
    const known = knownClient(clientName)
    return syncBudgetMs({
      parentS: timeoutLimits(config).parent,
      clientName,
      // Our installer writes the parent timeout into the client's registration (Codex tool_timeout_sec).
      registrationRaised: known !== undefined && (config.integrations as string[]).includes(known),
      overrideMs: this.runtime.flags.syncBudgetMs,
    })
  }

  /** Waits until the task finishes, the budget is spent or the signal aborts (waiting.ts); its record then. */
  follow(id: string, options: FollowOptions = {}): Promise<TaskRecord | undefined> {
    return follow(this.runs, id, options)
  }

  /** The task as this process knows it (the followed record, else the stored one). */
  async read(id: string): Promise<TaskRecord | undefined> {
    await this.recovering
    return this.runs.live.get(id)?.record ?? (await this.runs.store.read(id))
  }

  /** State files this process set aside since the last call, each returned once (task_list and stats report them). */
  takeSetAside(): SetAside[] {
    return this.runs.store.takeSetAside()
  }

  /**
   * Notes that a parent was handed the finished result of `record` (as it was read), once per finish;
   * retention keeps a result until then. Best effort: a record another process changed since, or a
   * failed write, is left as it is (the result is kept longer, never lost).
   */
  async resultRead(record: TaskRecord): Promise<void> {
    if (!isFinished(record.status) || record.resultReadAt) return
    const current = await this.read(record.id)
    if (!current || current.revision !== record.revision || !isFinished(current.status) || current.resultReadAt) return
    const at = new Date().toISOString()
    await this.runs.store
      .update(current, (r) => Object.assign(r, { resultReadAt: at }), { quiet: true })
      .catch(() => undefined) // an unmarked result is kept longer, never lost (see above)
  }

  /** Every task, newest first, as this process knows it. */
  async list(): Promise<TaskRecord[]> {
    await this.recovering
    return (await this.runs.store.list()).map((record) => this.runs.live.get(record.id)?.record ?? record)
  }

  /** The tasks a query selects, with the stored patches, the lanes and what was set aside (listing.ts). */
  listTasks(query: TaskQuery): Promise<Listing> {
    return listTasks(this, query)
  }

  /** The tasks matching `query`, newest first, as this process knows them, read through the store's index. */
  async page(query: IndexQuery): Promise<Page> {
    await this.recovering
    const found = await this.runs.store.page(query)
    return { ...found, records: found.records.map((record) => this.runs.live.get(record.id)?.record ?? record) }
  }

  /** What the ledger (stats) sums, from the index. */
  async ledger(): Promise<LedgerRecord[]> {
    await this.recovering
    return this.runs.store.ledger()
  }

  /** The ledger of tasks finished at or after `since` (epoch ms), from the index's cells. */
  async stats(since?: number): Promise<Stats> {
    await this.recovering
    return this.runs.store.stats(since)
  }

  /** True while this process runs the task's turn (or settles it). */
  isFollowing(id: string): boolean {
    return this.runs.live.has(id)
  }

  followedCount(): number {
    return this.runs.live.size
  }

  /** Resolves once every task this process follows has settled (each ends by its deadline at the latest). */
  async settled(): Promise<void> {
    // After recovery: the tasks it takes over are followed only once it has found them.
    await this.recovering
    await this.runs.settled()
  }

  /**
   * Withdraws the asks open in this process's tasks, within `ms` (serve, its last client gone): the
   * sessions go on without an answer rather than holding their workspace until the deadline.
   */
  async withdrawAsks(ms: number): Promise<void> {
    const reason = "the MCP client that could put it to the person closed"
    // Best effort: the watchdog taking the tasks over answers what is still pending (turn.ts TAKEN_OVER).
    await Promise.race([this.runs.withdrawAsks(reason).catch(() => undefined), Bun.sleep(ms)])
  }

  /** Cancels every task this process follows and waits for them to settle (tests, an orderly shutdown). */
  shutdown(): Promise<void> {
    return this.runs.shutdown()
  }

  /** Resolves once every record a full disk kept from being written is written, or after `ms`; false if some
   * are still not. */
  flushed(ms: number): Promise<boolean> {
    return this.runs.store.flushed(ms)
  }
}
