// One owner per task at a time. The process that drives a task's turn holds its claim: a file under the
// state dir (`owners/<task id>.json`) naming its PID and start time, taken with link(2) so exactly one
// taker wins, as slots and writer locks are. A process taking a task over (the next serve, the
// watchdog, a writer reconciling a lock) claims it before it looks for the session, and re-reads the
// record under the claim: of two takers racing for one task, one drives it and the other leaves it.
// A claim whose owner is provably gone (PID dead or reused) is taken back by the next claimant.
import { randomBytes } from "node:crypto"
import { mkdir, readdir, rm } from "node:fs/promises"
import { z } from "zod"
import { holdsOrReclaim, linkExclusive, writeClaim } from "../../util/claim-file"
import { sameProcess, selfStart } from "../../util/process"
import { readStateFile } from "../../util/state-file"

const OwnerSchema = z.object({
  taskID: z.string().min(1),
  ownerPid: z.number().int(),
  ownerStart: z.string().optional(),
  since: z.string(),
})

const FIX = "The task's claim is free again; the next process that looks takes the task over."
const TASK_ID = /^task_[A-Za-z0-9_-]+$/

export class TaskOwners {
  constructor(readonly dir: string) {}

  private file = (taskID: string) => `${this.dir}/${taskID}.json`

  /**
   * True once this process holds task `taskID`'s claim (already held by it, taken, or taken back from a
   * dead owner); false while another live process holds it.
   */
  async claim(taskID: string): Promise<boolean> {
    // The id becomes a file name: anything else is not a task of ours.
    if (!TASK_ID.test(taskID)) return false
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    const file = this.file(taskID)
    // Unique per call: two claims in one process (recovery beside a writer reconciling a lock) must not
    // remove each other's temporary file.
    const temp = `${this.dir}/.${taskID}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
    const mine = { taskID, ownerPid: process.pid, ownerStart: selfStart(), since: new Date().toISOString() }
    await writeClaim(temp, mine)
    try {
      // Twice: a dead owner's (or an unreadable) claim is cleared by the first look, then taken.
      for (let attempt = 0; attempt < 2; attempt++) {
        if (await linkExclusive(temp, file)) return true
        const holder = await readStateFile(file, OwnerSchema, FIX)
        if (holder && holder.ownerPid === process.pid && holder.ownerStart === selfStart()) return true
        if (await holdsOrReclaim(file, OwnerSchema, FIX, (owner) => sameProcess(owner.ownerPid, owner.ownerStart)))
          return false
      }
      return false
    } finally {
      await rm(temp, { force: true })
    }
  }

  /**
   * Tasks whose claim names a process that is gone. Such a task may still be running by its record
   * whatever the task index says (recovery.ts reads each record): a claim is taken before a turn starts
   * and given up when it settles, so the claims are the tasks in flight, few whatever the history.
   */
  async abandoned(): Promise<string[]> {
    // No owners directory yet: no claims.
    const names = await readdir(this.dir).catch(() => [] as string[])
    const found: string[] = []
    for (const name of names) {
      const taskID = name.slice(0, -5)
      if (!name.endsWith(".json") || !TASK_ID.test(taskID)) continue
      const holder = await readStateFile(this.file(taskID), OwnerSchema, FIX)
      if (holder && !sameProcess(holder.ownerPid, holder.ownerStart)) found.push(taskID)
    }
    return found
  }

  /** Gives the claim up, if this process holds it (the task settled, or a taker found nothing to do). */
  async release(taskID: string): Promise<void> {
    if (!TASK_ID.test(taskID)) return
    const holder = await readStateFile(this.file(taskID), OwnerSchema, FIX)
    if (holder?.ownerPid === process.pid && holder.ownerStart === selfStart())
      await rm(this.file(taskID), { force: true })
  }
}
