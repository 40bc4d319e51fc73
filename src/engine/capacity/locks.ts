// Writer states per canonical workspace: at most one writable delegation edits a directory. The
// state is a file under the state dir (so two MCP server processes exclude each other), created with
// link(2) so exactly one acquirer wins and nobody reads half a file.
//
//   active       a writable session may be running
//   cleaning     it ended; its session is being aborted and removed
//   quarantined  removal could not be confirmed: something may still write here
//   preserved    the session was kept on purpose (OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS=1)
//
// Any state refuses a second writer on the same directory, on any directory inside it and on any
// directory it is inside: a writer in <repo>/sub edits files of <repo> too. The state is cleared only once the session
// is confirmed
// removed. A state whose owner process died is recoverable: the next process reconciles it.
import { createHash, randomBytes } from "node:crypto"
import { link, mkdir, readdir, rm } from "node:fs/promises"
import { z } from "zod"
import { fail } from "../../errors"
import { writeAtomic, writeJson } from "../../util/fs"
import { sameProcess, selfStart } from "../../util/process"
import { readStateFile } from "../../util/state-file"

const WRITER_STATES = ["active", "cleaning", "quarantined", "preserved"] as const
export type WriterState = (typeof WRITER_STATES)[number]

const LockSchema = z.object({
  workspace: z.string().startsWith("/"),
  state: z.enum(WRITER_STATES),
  taskID: z.string().min(1),
  ownerPid: z.number().int(),
  /** The owner's boot and start time (util/process.ts processStart): a reused PID is not the owner. */
  ownerStart: z.string().optional(),
  sessionID: z.string().optional(),
  reason: z.string().optional(),
  since: z.string(),
})

export type WriterLock = z.infer<typeof LockSchema>

const LOCK_FIX =
  "The workspace is free again; if a delegation may still be editing it, check git status there before the next one."

export class WriterLocks {
  constructor(readonly dir: string) {}

  private file(workspace: string) {
    return `${this.dir}/${createHash("sha256").update(workspace).digest("hex").slice(0, 32)}.json`
  }

  read(workspace: string): Promise<WriterLock | undefined> {
    return readStateFile(this.file(workspace), LockSchema, LOCK_FIX)
  }

  async list(): Promise<WriterLock[]> {
    // No locks directory yet: no locks.
    const names = await readdir(this.dir).catch(() => [] as string[])
    const locks = await Promise.all(
      names
        .filter((name) => /^[a-f0-9]{32}\.json$/.test(name))
        .map((name) => readStateFile(`${this.dir}/${name}`, LockSchema, LOCK_FIX)),
    )
    return locks.filter((lock): lock is WriterLock => lock !== undefined)
  }

  /**
   * Takes the workspace for a task, or returns the lock that holds it (or an ancestor or descendant of
   * it). Link first, then look: of two overlapping acquirers at least one sees the other's file after
   * linking its own, so both may back off but never both win.
   */
  async tryAcquire(
    workspace: string,
    taskID: string,
  ): Promise<{ acquired: true } | { acquired: false; holder: WriterLock }> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    const lock: WriterLock = {
      workspace,
      state: "active",
      taskID,
      ownerPid: process.pid,
      ownerStart: selfStart(),
      since: new Date().toISOString(),
    }
    // One temp name per call: two acquires by one holder in one process (racing patch_apply calls) never share it.
    const temp = `${this.dir}/.${taskID}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
    await writeAtomic(temp, JSON.stringify(lock, null, 2), 0o600)
    try {
      await link(temp, this.file(workspace))
      const overlapping = (await this.list()).find(
        (other) => other.workspace !== workspace && overlaps(other.workspace, workspace),
      )
      if (!overlapping) return { acquired: true }
      await rm(this.file(workspace), { force: true })
      return { acquired: false, holder: overlapping }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const holder = await this.read(workspace)
      // A lock file that vanished, or was corrupt and has just been moved aside: nobody holds it, and
      // the caller's second attempt takes it.
      return {
        acquired: false,
        holder: holder ?? {
          ...lock,
          taskID: "unknown",
          ownerPid: 0,
          ownerStart: undefined,
          reason: "the lock file could not be read",
        },
      }
    } finally {
      await rm(temp, { force: true })
    }
  }

  /** Moves the workspace to another state, only while this task holds it. */
  async set(
    workspace: string,
    taskID: string,
    state: WriterState,
    extra: { sessionID?: string; reason?: string } = {},
  ): Promise<void> {
    const current = await this.read(workspace)
    if (!current || current.taskID !== taskID) return
    await writeJson(
      this.file(workspace),
      {
        ...current,
        ...extra,
        state,
        ownerPid: process.pid,
        ownerStart: selfStart(),
        since: new Date().toISOString(),
      } satisfies WriterLock,
      0o600,
    )
  }

  /** Clears the state, only while this task holds it. Call only once the session is confirmed removed. */
  async clear(workspace: string, taskID: string): Promise<void> {
    const current = await this.read(workspace)
    if (current && current.taskID === taskID) await rm(this.file(workspace), { force: true })
  }
}

/** One directory is the other or inside it. Pure. */
export const overlaps = (a: string, b: string) =>
  a === b || a.startsWith(b === "/" ? "/" : `${b}/`) || b.startsWith(a === "/" ? "/" : `${a}/`)

/**
 * True unless the process that set this state is provably alive (its PID with the same start time):
 * a dead owner, a reused PID, or a lock without an owner identity can be reconciled by another.
 */
export const orphaned = (lock: WriterLock) => !sameProcess(lock.ownerPid, lock.ownerStart)

/** The refusal a second writer gets: who holds the workspace, and what the parent can do about it. */
export function lockedError(lock: WriterLock, wanted = lock.workspace) {
  const hints: Record<WriterState, string> = {
    active:
      `Wait for it (task_status with task_id ${lock.taskID} and wait_seconds) or stop it (task_cancel), then ` +
      `retry. Read-only scout calls are not blocked.`,
    cleaning: "Its session is being stopped and removed; retry in a few seconds.",
    quarantined:
      `Check that no OpenCode session still edits this ` +
      `directory${lock.sessionID ? ` (session ${lock.sessionID})` : ""}, inspect the workspace (git status), then ` +
      `restart the MCP server to clear the quarantine.`,
    preserved:
      `Session preservation is on (OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS=1): inspect or export ` +
      `session ${lock.sessionID ?? "(unknown)"} (opencode export), then restart the MCP server to release the ` +
      `workspace.`,
  }
  const where =
    wanted === lock.workspace ? `The workspace ${lock.workspace} is` : `${wanted} overlaps ${lock.workspace}, which is`
  return fail(
    "Locked",
    `${where} held by task ${lock.taskID} (writer state ${lock.state} since ` +
      `${lock.since}${lock.reason ? `: ${lock.reason}` : ""}).`,
    hints[lock.state],
    {
      taskID: lock.taskID,
      state: lock.state,
      sessionID: lock.sessionID,
    },
  )
}
