// The machine-wide concurrency cap of delegate_parallel: config maxParallel slots, each a file under
// the state dir (`slot-<n>.json`) created with link(2) so exactly one taker wins, as the writer locks
// are (locks.ts). Every MCP server process on the machine shares the directory, so several parent
// sessions together never run more than maxParallel queued tasks on the one OpenCode server.
//
// A waiting task holds a ticket (`queue/<ms>-<task>.json`); the live tickets older than it are the
// "n ahead" it reports, and it takes a slot only when fewer are ahead than slots are free, so tasks
// start in the order they queued. Slots and tickets of a dead owner (PID gone or reused, see
// util/process.ts sameProcess) are reclaimed by whoever finds them.
import { mkdir, readdir, rm } from "node:fs/promises"
import { z } from "zod"
import { holdsOrReclaim, linkExclusive } from "../util/claim-file"
import { writeAtomic } from "../util/fs"
import { sameProcess, selfStart } from "../util/process"
import { readStateFile } from "../util/state-file"

const HolderSchema = z.object({ taskID: z.string().min(1), ownerPid: z.number().int(), ownerStart: z.string().optional(), since: z.string() })
type Holder = z.infer<typeof HolderSchema>

const FIX = "The slot or ticket is free again; nothing else to do."
/** Another process's release is seen by polling; this process's own wakes its waiters at once. */
const POLL_MS = 200

export interface Slot {
  release(): Promise<void>
}

export class Slots {
  /** Waiters in this process, woken when one of its slots is released. */
  private readonly wakers = new Set<() => void>()

  constructor(
    readonly dir: string,
    /** The cap, read again on every attempt (config.json may change while tasks wait). */
    private readonly cap: () => Promise<number>,
  ) {}

  private holder = (taskID: string): Holder => ({ taskID, ownerPid: process.pid, ownerStart: selfStart(), since: new Date().toISOString() })

  /** Waits for a slot (reporting how many are ahead whenever that changes); undefined if the signal aborted first. */
  async take(taskID: string, signal: AbortSignal, onQueued: (ahead: number) => void): Promise<Slot | undefined> {
    await mkdir(`${this.dir}/queue`, { recursive: true, mode: 0o700 })
    const ticket = `${this.dir}/queue/${Date.now().toString().padStart(15, "0")}-${taskID}.json`
    await writeAtomic(ticket, JSON.stringify(this.holder(taskID)), 0o600)
    let reported: number | undefined
    try {
      while (!signal.aborted) {
        const ahead = await this.ahead(ticket)
        const cap = await this.cap()
        if (ahead < cap - (await this.held(cap))) {
          const slot = await this.tryTake(taskID, cap)
          if (slot) return slot
        }
        if (ahead !== reported) onQueued(ahead)
        reported = ahead
        await this.pause(signal)
      }
      return undefined
    } finally {
      await rm(ticket, { force: true })
    }
  }

  /** Slots held by live owners among the first `cap` (a dead owner's slot is reclaimed on the way). */
  async held(cap: number): Promise<number> {
    let count = 0
    for (let index = 0; index < cap; index++) if (await this.live(this.file(index))) count++
    return count
  }

  private file = (index: number) => `${this.dir}/slot-${index}.json`

  private async tryTake(taskID: string, cap: number): Promise<Slot | undefined> {
    const temp = `${this.dir}/.${taskID}.${process.pid}.tmp`
    await writeAtomic(temp, JSON.stringify(this.holder(taskID)), 0o600)
    try {
      for (let index = 0; index < cap; index++) {
        const file = this.file(index)
        if (await this.live(file)) continue
        if (await linkExclusive(temp, file)) return { release: () => this.release(file, taskID) }
      }
      return undefined
    } finally {
      await rm(temp, { force: true })
    }
  }

  /** True while a live process holds the file; a dead owner's file is moved out of the way and removed. */
  private live(file: string): Promise<boolean> {
    return holdsOrReclaim(file, HolderSchema, FIX, (holder) => sameProcess(holder.ownerPid, holder.ownerStart))
  }

  private async ahead(ticket: string): Promise<number> {
    const mine = ticket.slice(ticket.lastIndexOf("/") + 1)
    const names = (await readdir(`${this.dir}/queue`).catch(() => [] as string[])).filter((name) => name.endsWith(".json") && name < mine)
    let count = 0
    for (const name of names) if (await this.live(`${this.dir}/queue/${name}`)) count++
    return count
  }

  private async release(file: string, taskID: string) {
    const holder = await readStateFile(file, HolderSchema, FIX)
    if (holder?.taskID === taskID && holder.ownerPid === process.pid) await rm(file, { force: true })
    for (const wake of [...this.wakers]) wake()
  }

  private pause(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener("abort", done)
        this.wakers.delete(done)
        resolve()
      }
      const timer = setTimeout(done, POLL_MS)
      signal.addEventListener("abort", done, { once: true })
      this.wakers.add(done)
    })
  }
}
