// Releases the shared server's instances of the directories this process delegated to, once they
// rest (instance-plan.ts decides which). Each MCP process (and the watchdog) releases only directories
// it used itself, so no leader is needed; the server's session status, which counts every client's
// sessions, is asked just before each disposal, and a turn of this process holds its directory.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { disposeInstance, sessionRunningIn } from "../../opencode/instances"
import type { InstanceMarks } from "./instance-marks"
import { instancesToRelease, type InstanceLimits, type InstanceUse } from "./instance-plan"

export interface InstanceDeps {
  /** The connection already open, if any: releasing never starts a server. */
  client: () => OpencodeClient | undefined
  limits: () => Promise<InstanceLimits>
  /** Shared by every process on the machine: a use there and a release never cross. */
  marks: InstanceMarks
  /** Asked after a sweep that leaves this process no directory: restarts a rested, grown server (recycle.ts). */
  recycle?: () => Promise<unknown>
}

/** The recycle check reads /proc every time and may ask the server: at most this often. */
const RECYCLE_CHECK_MS = 10_000

export class Instances {
  private readonly uses = new Map<string, InstanceUse>()
  private timer?: ReturnType<typeof setInterval>
  private sweeping?: Promise<string[]>
  private recycleCheckedMs = 0

  constructor(private readonly deps: InstanceDeps) {}

  /** A delegation started, ran or ended a turn in `directory`. */
  touch(directory: string) {
    const use = this.uses.get(directory) ?? { directory, lastUsedMs: 0, holds: 0 }
    use.lastUsedMs = Date.now()
    this.uses.set(directory, use)
  }

  /**
   * Keeps `directory` live while a turn runs there, for every process on the machine; resolves once no
   * release there is under way. The returned function ends the hold.
   */
  async hold(directory: string): Promise<() => Promise<void>> {
    this.touch(directory)
    const use = this.uses.get(directory) as InstanceUse
    use.holds++
    // The mark can only fail with the state dir (unwritable, full): the hold in this process still stands.
    const unmark = await this.deps.marks.use(directory).catch(() => async () => undefined)
    let done = false
    return async () => {
      if (done) return
      done = true
      use.holds--
      this.touch(directory)
      // Left behind only until this process exits (a dead process's mark counts for nothing).
      await unmark().catch(() => undefined)
    }
  }

  /** Directories this process believes live on the server, least recently used first. */
  live(): string[] {
    return [...this.uses.values()].sort((a, b) => a.lastUsedMs - b.lastUsedMs).map((use) => use.directory)
  }

  /** Releases what has rested past the limits; one sweep at a time. Returns what was released. */
  sweep(nowMs = Date.now()): Promise<string[]> {
    this.sweeping ??= this.run(async () => instancesToRelease([...this.uses.values()], nowMs, await this.deps.limits()))
      .then(async (released) => {
        if (this.uses.size === 0 && this.deps.recycle && nowMs - this.recycleCheckedMs >= RECYCLE_CHECK_MS) {
          this.recycleCheckedMs = nowMs
          // A check that could not read the server or its marks is made again at a later sweep.
          await this.deps.recycle().catch(() => undefined)
        }
        return released
      })
      .finally(() => (this.sweeping = undefined))
    return this.sweeping
  }

  /** The server was replaced: its instances went with it, so only directories a turn holds stay known. */
  forgetServer() {
    for (const [directory, use] of this.uses) if (use.holds === 0) this.uses.delete(directory)
  }

  /** A freed lane, or a process leaving: released at once unless a session runs there. */
  async release(directories: string[]): Promise<string[]> {
    await this.sweeping
    return this.run(async () => directories)
  }

  /** Sweeps every `tickMs` (the timer never keeps the process alive). */
  start(tickMs: number) {
    // A sweep that could not reach the server tries again at the next tick.
    this.timer ??= setInterval(() => void this.sweep().catch(() => undefined), tickMs)
    this.timer.unref?.()
  }

  stop() {
    clearInterval(this.timer)
    this.timer = undefined
  }

  private async run(choose: () => Promise<string[]>): Promise<string[]> {
    const client = this.deps.client()
    if (!client) return []
    const released: string[] = []
    for (const directory of await choose()) {
      // A release that fails leaves the instance in place for a later pass.
      if (await this.deps.marks.releasing(directory, () => this.dispose(client, directory)).catch(() => false)) {
        released.push(directory)
        if (!this.held(directory)) this.uses.delete(directory)
      }
    }
    return released
  }

  /** Disposes unless a session runs there (anyone's: the server counts them) or a turn here holds it. */
  private async dispose(client: OpencodeClient, directory: string): Promise<boolean> {
    if (this.held(directory)) return false
    // Unknown counts as running: a release can wait for the next sweep, a cancelled turn cannot be undone.
    if (await sessionRunningIn(client, directory).catch(() => true)) return false
    if (this.held(directory)) return false
    // As above: an instance not disposed is not released.
    return disposeInstance(client, directory).then(
      () => true,
      () => false,
    )
  }

  private held = (directory: string) => (this.uses.get(directory)?.holds ?? 0) > 0
}
