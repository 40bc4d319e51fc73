// The machine-wide concurrency cap of delegate_parallel: config maxParallel slots, each a file under
// the state dir (`slot-<n>.json`) created with link(2) so exactly one taker wins, as the writer locks
// are (locks.ts). Every MCP server process on the machine shares the directory, so several parent
// sessions together never run more than maxParallel queued tasks on the one OpenCode server.
//
// A waiting task holds a ticket (`queue/<ms>-<task>.json`); the live tickets older than it are the
// "n ahead" it reports, and it takes a slot only when fewer are ahead than slots are free, so tasks
// start in the order they queued. A ticket of a dead owner (PID gone or reused, see util/process.ts
// sameProcess) is reclaimed by whoever finds it.
//
// A slot counts a session, not a process: the cap is on sessions running on the shared server, and a
// SIGKILLed process's sessions keep running there. So a slot whose owner is dead is reclaimed only once
// no session of its task is busy on the shared server (idle, gone, or the server gone with it), and not
// within HANDOVER_MS of its last write (a prompt sent just before the kill may not have made the session
// busy yet). Nobody aborts another process's session to get a slot: the process that takes the task
// over (recovery.ts) adopts its slot instead, and frees it when the task settles.
//
// A live process is not enough: a slot or ticket naming some unrelated process (with its real start
// time) would hold for as long as that process runs. So a live holder holds only while the task it
// names exists, is unfinished and is followed by that process (or by nobody alive: a takeover is
// under way); otherwise it is reclaimed at once.
import { lstat, mkdir, readdir, rm } from "node:fs/promises"
import { z } from "zod"
import { holdsOrReclaim, linkExclusive, removeJudged, writeClaim } from "../../util/claim-file"
import { writeAtomic } from "../../util/fs"
import { sameProcess, selfStart } from "../../util/process"
import { readStateFile } from "../../util/state-file"

const HolderSchema = z.object({
  taskID: z.string().min(1),
  ownerPid: z.number().int(),
  ownerStart: z.string().optional(),
  since: z.string(),
  /** A slot's: where its task's sessions run, to ask the shared server whether one is still busy. */
  workspace: z.string().optional(),
  /** A slot's: when its owner last wrote it (taken, adopted, or its session created). */
  touched: z.string().optional(),
})
type Holder = z.infer<typeof HolderSchema>

/** Whether `holder` is this process's, for task `taskID`. */
const ours = (holder: Holder, taskID: string) => holder.taskID === taskID && holder.ownerPid === process.pid

/** True while a session of task `taskID` in `workspace` is busy on the shared server; a rejection counts as busy. */
export type SessionBusy = (taskID: string, workspace: string) => Promise<boolean>

/** True while task `taskID` exists, is unfinished, and process `ownerPid` (alive) may be the one following it. */
export type TaskFollowed = (holder: Pick<Holder, "taskID" | "ownerPid" | "ownerStart">) => Promise<boolean>

/** How long a dead owner's slot stays held after its last write, whatever the server says. */
export const HANDOVER_MS = 10_000

const FIX = "The slot or ticket is free again; nothing else to do."
/** Another process's release is seen by polling; this process's own wakes its waiters at once. */
const POLL_MS = 200

export interface Slot {
  /** Rewrites the slot as written now (its task's session was just created): the handover window restarts. */
  touch(): Promise<void>
  /**
   * Frees the slot: removes the very file this process made there, never the name. Once its task is
   * finished, another process may reclaim the slot and link its own claim while a release reads; a release
   * that checked the holder and then removed the name would remove that claim, and a third task would run.
   */
  release(): Promise<void>
}

export class Slots {
  /** Waiters in this process, woken when one of its slots is released. */
  private readonly wakers = new Set<() => void>()

  constructor(
    readonly dir: string,
    /** The cap, read again on every attempt (config.json may change while tasks wait). */
    private readonly cap: () => Promise<number>,
    /** Asked only about a slot whose owner is dead; without it such a slot is free at once. */
    private readonly sessionBusy: SessionBusy = async () => false,
    /** Asked about a holder whose process lives; without it any live process holds. */
    private readonly followed: TaskFollowed = async () => true,
  ) {}

  private holder = (taskID: string, workspace?: string): Holder => {
    const now = new Date().toISOString()
    return {
      taskID,
      ownerPid: process.pid,
      ownerStart: selfStart(),
      since: now,
      workspace,
      touched: workspace ? now : undefined,
    }
  }

  /**
   * Waits for a slot for task `taskID`, whose sessions run in `workspace` (reporting how many are ahead
   * whenever that changes); undefined if the signal aborted first.
   */
  async take(
    taskID: string,
    workspace: string,
    signal: AbortSignal,
    onQueued: (ahead: number) => void,
  ): Promise<Slot | undefined> {
    await mkdir(`${this.dir}/queue`, { recursive: true, mode: 0o700 })
    const ticket = `${this.dir}/queue/${Date.now().toString().padStart(15, "0")}-${taskID}.json`
    await writeAtomic(ticket, JSON.stringify(this.holder(taskID)), 0o600)
    let reported: number | undefined
    try {
      while (!signal.aborted) {
        const ahead = await this.ahead(ticket)
        const cap = await this.cap()
        if (ahead < cap - (await this.held(cap))) {
          const slot = await this.tryTake(taskID, workspace, cap)
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

  private async tryTake(taskID: string, workspace: string, cap: number): Promise<Slot | undefined> {
    const temp = `${this.dir}/.${taskID}.${process.pid}.tmp`
    await writeClaim(temp, this.holder(taskID, workspace))
    try {
      // The file linked at the slot's name: what this process made there, to release that file only.
      const made = (await lstat(temp)).ino
      for (let index = 0; index < cap; index++) {
        const file = this.file(index)
        if (await this.live(file)) continue
        if (await linkExclusive(temp, file)) return this.handle(file, taskID, workspace, made)
      }
      return undefined
    } finally {
      await rm(temp, { force: true })
    }
  }

  /**
   * The slot a dead process took for task `taskID` (its session may still run), made this process's;
   * undefined when there is none (never taken, or already free and reclaimed).
   */
  async adopt(taskID: string, workspace: string): Promise<Slot | undefined> {
    const names = (await readdir(this.dir).catch(() => [] as string[])).filter((name) => /^slot-\d+\.json$/.test(name))
    for (const name of names) {
      const file = `${this.dir}/${name}`
      const judged = await lstat(file).catch(() => undefined) // gone meanwhile: not this one
      const holder = await readStateFile(file, HolderSchema, FIX)
      if (!judged || holder?.taskID !== taskID) continue
      if (ours(holder, taskID) && sameProcess(holder.ownerPid, holder.ownerStart))
        return this.handle(file, taskID, workspace, judged.ino)
      // Our holder renamed over the dead one's under the reclaim lock: the name is never empty, so no
      // taker can link its own file in between and run a session beside the one this task still runs.
      const temp = `${this.dir}/.${taskID}.${process.pid}.tmp`
      await writeClaim(temp, this.holder(taskID, workspace))
      try {
        const made = (await lstat(temp)).ino
        const outcome = await removeJudged(
          file,
          judged,
          async () => {
            const again = await readStateFile(file, HolderSchema, FIX)
            if (!again) return "free"
            // Still this task's (another process adopting it first would have made it its own).
            return again.taskID === taskID && !sameProcess(again.ownerPid, again.ownerStart) ? "gone" : "held"
          },
          temp,
        )
        return outcome === "removed" ? this.handle(file, taskID, workspace, made) : undefined
      } finally {
        await rm(temp, { force: true })
      }
    }
    return undefined
  }

  private handle(file: string, taskID: string, workspace: string, made: number): Slot {
    let ino = made
    return {
      touch: async () => {
        ino = (await this.touch(file, taskID, workspace, ino)) ?? ino
      },
      release: () => this.release(file, taskID, ino),
    }
  }

  /**
   * True while the file's holder holds: a ticket while its process lives; a slot also while its task's
   * session is busy on the shared server or its handover window lasts. Otherwise it is moved out of
   * the way and removed.
   */
  private live(file: string): Promise<boolean> {
    return holdsOrReclaim(file, HolderSchema, FIX, async (holder) => {
      // A record that cannot be read is not a reason to give the slot away: only a clear answer is.
      if (sameProcess(holder.ownerPid, holder.ownerStart)) return this.followed(holder).catch(() => true)
      if (!holder.workspace) return false
      if (Date.now() - Date.parse(holder.touched ?? holder.since) < HANDOVER_MS) return true
      // Not knowing whether its session runs is not a reason to exceed the cap.
      return this.sessionBusy(holder.taskID, holder.workspace).catch(() => true)
    })
  }

  /** Rewrites this process's file at the slot (a new file renamed over it): the new file's inode, else undefined. */
  private async touch(file: string, taskID: string, workspace: string, made: number) {
    const holder = await readStateFile(file, HolderSchema, FIX)
    if (!holder || !ours(holder, taskID)) return undefined
    // Written beside it and renamed over it, so the name never empties and the new file is known as ours.
    const temp = `${this.dir}/.${taskID}.${process.pid}.touch`
    await writeClaim(temp, { ...holder, workspace, touched: new Date().toISOString() })
    try {
      const next = (await lstat(temp)).ino
      const outcome = await removeJudged(file, { ino: made }, () => this.stillOurs(file, taskID), temp)
      return outcome === "removed" ? next : undefined
    } finally {
      await rm(temp, { force: true })
    }
  }

  /** A judge for removeJudged: "gone" (ours to replace or remove) while the slot's file names this process's task. */
  private async stillOurs(file: string, taskID: string): Promise<"gone" | "held"> {
    const holder = await readStateFile(file, HolderSchema, FIX)
    return holder && ours(holder, taskID) ? "gone" : "held"
  }

  private async ahead(ticket: string): Promise<number> {
    const mine = ticket.slice(ticket.lastIndexOf("/") + 1)
    // No queue directory yet: nobody ahead.
    const names = (await readdir(`${this.dir}/queue`).catch(() => [] as string[])).filter(
      (name) => name.endsWith(".json") && name < mine,
    )
    let count = 0
    for (const name of names) if (await this.live(`${this.dir}/queue/${name}`)) count++
    return count
  }

  /**
   * Removes the file this process made at the slot (`made`, its inode), under the reclaim lock: a name that
   * links another file now, or that a reclaimer is judging, is left as it is (a claim of a finished task
   * is reclaimed by whoever looks next).
   */
  private async release(file: string, taskID: string, made: number) {
    await removeJudged(file, { ino: made }, () => this.stillOurs(file, taskID))
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
