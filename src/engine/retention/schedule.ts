// Retention on a schedule: every long-lived process (serve, and the watchdog `supervise`) runs a pass
// soon after it starts and then every retentionIntervalSeconds (config.json), so a process that lives a
// month prunes as one that restarts daily. A pass never starts a shared server: parked sessions are
// removed only over a connection this process already has; without one they wait for a later pass.
import type { Runtime } from "../capacity"
import type { TaskStore } from "../store"
import { prune, type PruneOutcome } from "./retention"
import { sweep, type SweepOptions, type SweepOutcome } from "./sweep"

export type PassOutcome = PruneOutcome & SweepOutcome

export class RetentionSchedule {
  private timer?: ReturnType<typeof setTimeout>
  private stopped = false
  /** Passes finished by this process, newest last (bounded): what a test or doctor can look at. */
  readonly passes: PassOutcome[] = []
  /** Passes finished by this process, all counted (`passes` keeps the last 20). */
  finished = 0

  constructor(
    private readonly runtime: Runtime,
    private readonly store: TaskStore,
    private readonly discardApplied: SweepOptions["discardApplied"],
    /** Resolves when the process may start its first pass (after recovery). */
    private readonly ready: Promise<void>,
  ) {}

  start(firstDelayMs = 1000) {
    this.arm(firstDelayMs)
  }

  stop() {
    this.stopped = true
    clearTimeout(this.timer)
  }

  private arm(ms: number) {
    if (this.stopped) return
    this.timer = setTimeout(() => void this.tick(), ms)
    // Housekeeping never keeps a process alive that has nothing else to do.
    this.timer.unref?.()
  }

  private async tick() {
    // The interval is read again each time, so an edit to config.json applies without a restart.
    const config = await this.runtime.config().catch(() => undefined)
    await this.pass(config?.retentionPerPass ?? 500).catch(() => undefined)
    this.arm((config?.retentionIntervalSeconds ?? 3600) * 1000)
  }

  /** One bounded pass; each part's failure is housekeeping left to the next pass. */
  async pass(perPass: number, now = Date.now()): Promise<PassOutcome> {
    await this.ready
    const client = this.runtime.current()?.client
    const none: PruneOutcome = { sessionsRemoved: 0, recordsRemoved: 0 }
    // A failed pass removes nothing; the next pass tries again.
    const records = await prune(this.store, client, { now, perPass }).catch(() => none)
    const left = Math.max(0, perPass - records.sessionsRemoved - records.recordsRemoved)
    const empty: SweepOutcome = { groups: 0, setAside: 0, tombstones: 0, runs: 0, appliedPatches: 0, frozen: 0 }
    const { limits } = this.runtime.flags.sandbox
    const options = { now, perPass: left, limits, discardApplied: this.discardApplied }
    // As above.
    const files = left > 0 ? await sweep(this.runtime.paths, options).catch(() => empty) : empty
    const outcome = { ...records, ...files }
    if (this.passes.push(outcome) > 20) this.passes.shift()
    this.finished++
    return outcome
  }
}
