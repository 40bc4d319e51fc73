// Writer states per canonical workspace: at most one writable delegation edits a directory. The
// state is a file under the state dir (so two MCP server processes exclude each other), created with
// link(2) so exactly one acquirer wins and nobody reads half a file.
//
//   active       a writable session may be running
//   cleaning     it ended; its session is being aborted and removed
//   quarantined  removal could not be confirmed: something may still write here
//   preserved    the session was kept on purpose (OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS=1)
//
// Any state refuses a second writer. The state is cleared only once the session is confirmed
// removed. A state whose owner process died is recoverable: the next process reconciles it.
import { createHash } from "node:crypto"
import { link, mkdir, readdir, rm } from "node:fs/promises"
import { fail } from "../errors"
import { readJson, writeAtomic, writeJson } from "../util/fs"
import { alive } from "../util/process"

export const WRITER_STATES = ["active", "cleaning", "quarantined", "preserved"] as const
export type WriterState = (typeof WRITER_STATES)[number]

export interface WriterLock {
  workspace: string
  state: WriterState
  taskID: string
  ownerPid: number
  sessionID?: string
  reason?: string
  since: string
}

export class WriterLocks {
  constructor(readonly dir: string) {}

  private file(workspace: string) {
    return `${this.dir}/${createHash("sha256").update(workspace).digest("hex").slice(0, 32)}.json`
  }

  read(workspace: string): Promise<WriterLock | undefined> {
    return readJson<WriterLock>(this.file(workspace))
  }

  async list(): Promise<WriterLock[]> {
    const names = await readdir(this.dir).catch(() => [] as string[])
    const locks = await Promise.all(names.filter((name) => /^[a-f0-9]{32}\.json$/.test(name)).map((name) => readJson<WriterLock>(`${this.dir}/${name}`)))
    return locks.filter((lock): lock is WriterLock => Boolean(lock?.state))
  }

  /** Takes the workspace for a task, or returns the lock that holds it. */
  async tryAcquire(workspace: string, taskID: string): Promise<{ acquired: true } | { acquired: false; holder: WriterLock }> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    const lock: WriterLock = { workspace, state: "active", taskID, ownerPid: process.pid, since: new Date().toISOString() }
    const temp = `${this.dir}/.${taskID}.${process.pid}.tmp`
    await writeAtomic(temp, JSON.stringify(lock, null, 2), 0o600)
    try {
      await link(temp, this.file(workspace))
      return { acquired: true }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const holder = await this.read(workspace)
      // A lock file that vanished or is unreadable between link and read: report it as active, unknown.
      return { acquired: false, holder: holder ?? { ...lock, taskID: "unknown", ownerPid: 0, reason: "the lock file could not be read" } }
    } finally {
      await rm(temp, { force: true })
    }
  }

  /** Moves the workspace to another state, only while this task holds it. */
  async set(workspace: string, taskID: string, state: WriterState, extra: { sessionID?: string; reason?: string } = {}): Promise<void> {
    const current = await this.read(workspace)
    if (!current || current.taskID !== taskID) return
    await writeJson(this.file(workspace), { ...current, ...extra, state, ownerPid: process.pid, since: new Date().toISOString() } satisfies WriterLock, 0o600)
  }

  /** Clears the state, only while this task holds it. Call only once the session is confirmed removed. */
  async clear(workspace: string, taskID: string): Promise<void> {
    const current = await this.read(workspace)
    if (current && current.taskID === taskID) await rm(this.file(workspace), { force: true })
  }
}

/** True when the process that set this state is gone, so its state can be reconciled by another. */
export const orphaned = (lock: WriterLock) => lock.ownerPid !== process.pid && !alive(lock.ownerPid)

/** The refusal a second writer gets: who holds the workspace, and what the parent can do about it. */
export function lockedError(lock: WriterLock) {
  const hints: Record<WriterState, string> = {
    active: `Wait for it (task_status with task_id ${lock.taskID} and wait_seconds) or stop it (task_cancel), then retry. Read-only scout calls are not blocked.`,
    cleaning: "Its session is being stopped and removed; retry in a few seconds.",
    quarantined: `Check that no OpenCode session still edits this directory${lock.sessionID ? ` (session ${lock.sessionID})` : ""}, inspect the workspace (git status), then restart the MCP server to clear the quarantine.`,
    preserved: `Session preservation is on (OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS=1): inspect or export session ${lock.sessionID ?? "(unknown)"} (opencode export), then restart the MCP server to release the workspace.`,
  }
  return fail(
    "Locked",
    `The workspace ${lock.workspace} is held by task ${lock.taskID} (writer state ${lock.state} since ${lock.since}${lock.reason ? `: ${lock.reason}` : ""}).`,
    hints[lock.state],
    { taskID: lock.taskID, state: lock.state, sessionID: lock.sessionID },
  )
}
