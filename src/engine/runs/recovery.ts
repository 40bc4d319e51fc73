// After an MCP server restart (or when another server process died): every task record still says
// what happened. A task left `running` by a dead process is re-attached when its session still works
// on the shared OpenCode server, finished from its transcript when the session went idle with a
// report, and marked `interrupted` (with its session id) otherwise. A delegate_parallel member taken
// over keeps the machine-wide slot the dead process held for it (slots.ts adopt), or queues for one
// before its session starts, so the cap holds across the handover. A member that never had its slot is
// queued again, whatever its first deadline said. Every takeover holds the task's claim first
// (owners.ts): one owner per task at a time. Writer states left by a dead process are reconciled:
// cleared once the session is confirmed removed, else quarantined by us. A task whose parent asked to
// cancel it (cancelAskedAt) is finished cancelled, its session aborted, never resumed.
import { describe } from "../../errors"
import {
  abortSession,
  findSessions,
  lastMessageID,
  lastMessageRole,
  removeSession,
  sessionState,
} from "../../opencode/session"
import { readTranscript } from "../../opencode/transcript"
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { alive, sameProcess, selfStart } from "../../util/process"
import type { Runs, Live } from "./runs"
import { orphaned } from "../capacity"
import type { TaskRecord } from "../records"

/** Still `running` on disk, but the process that followed it is gone. */
const ownerGone = (record: TaskRecord) =>
  record.status === "running" &&
  (record.ownerStart === undefined
    ? record.ownerPid !== process.pid && !alive(record.ownerPid)
    : !sameProcess(record.ownerPid, record.ownerStart))

/** Takes over every task and writer state a dead process left; never rejects. */
export async function recoverAll(runs: Runs): Promise<void> {
  // Recovery is per task and records its own failures (interrupted, with the reason); nothing waits on the rest.
  await recoverLeft(runs).catch(() => undefined)
}

/**
 * The tasks recovery looks at: those the index lists as unfinished, and those whose claim a dead process
 * left (owners.ts), each read from its record. The record says whether it runs, not the index: a row
 * that missed a write (a continued task still listed as succeeded) hides no task from its takeover.
 */
async function leftTasks(runs: Runs): Promise<TaskRecord[]> {
  const listed = await runs.store.unfinished()
  const known = new Set(listed.map((record) => record.id))
  // A claims directory that cannot be read leaves the index's answer.
  for (const id of await runs.owners.abandoned().catch(() => [] as string[])) {
    if (known.has(id)) continue
    // Read through the store: a row that disagrees is repaired by the read.
    const record = await runs.store.read(id).catch(() => undefined)
    if (record) listed.push(record)
  }
  return listed
}

async function recoverLeft(runs: Runs) {
  const records = (await leftTasks(runs)).filter(ownerGone)
  const locks = (await runs.locks.list()).filter(orphaned)
  if (records.length === 0 && locks.length === 0) return
  for (const record of records) await recoverTask(runs, record)
  for (const lock of locks) if (!records.some((record) => record.id === lock.taskID)) await reconcileHolder(runs, lock)
}

/** A holder whose process died: recover its task when it still says running, else reconcile the state. */
export async function reconcileHolder(runs: Runs, holder: { taskID: string; workspace: string }) {
  // A record that cannot be read (moved aside as corrupt) leaves only the lock to reconcile below.
  const record = /^task_/.test(holder.taskID) ? await runs.store.read(holder.taskID).catch(() => undefined) : undefined
  if (record && ownerGone(record)) return recoverTask(runs, record)
  const lock = await runs.locks.read(holder.workspace)
  if (!lock || !orphaned(lock)) return
  if (!lock.sessionID) return runs.locks.clear(lock.workspace, lock.taskID)
  const { client } = await runs.runtime.opencode()
  await abortSession(client, lock.sessionID, lock.workspace)
  // A preserved session is evidence: it stays; the restart is what releases the workspace.
  if (lock.state === "preserved" || (await removeSession(client, lock.sessionID, lock.workspace)))
    return runs.locks.clear(lock.workspace, lock.taskID)
  await runs.locks.set(lock.workspace, lock.taskID, "quarantined", {
    reason: `session ${lock.sessionID}, left by a stopped MCP server, could not be confirmed removed`,
  })
}

/**
 * Takes the task over under its claim (owners.ts), taken before anything looks for its session: of
 * the watchdog, the next serve and a writer reconciling a lock, one drives the task, and the others
 * leave it. The record is read again under the claim, since a taker that came first may have settled it.
 */
async function recoverTask(runs: Runs, found: TaskRecord): Promise<void> {
  if (runs.live.has(found.id)) return
  // A claim that cannot be taken (the state dir unwritable) is no ownership: leave the task to others.
  if (!(await runs.owners.claim(found.id).catch(() => false))) return
  // A record moved aside as corrupt meanwhile is nothing to take over.
  const record = await runs.store.read(found.id).catch(() => undefined)
  if (!record || !ownerGone(record) || runs.live.has(found.id)) {
    // Left behind, the claim is taken back from this process once it is gone.
    if (!runs.live.has(found.id)) await runs.owners.release(found.id).catch(() => undefined)
    return
  }
  await takeOver(runs, record)
}

/** The transcript of the attempt in flight: a task_continue turn's session also holds the earlier turns. */
function attemptTranscript(client: OpencodeClient, record: TaskRecord, sessionID: string) {
  const open = record.spending?.open
  const after = open?.sessionID === sessionID ? open.after : undefined
  return readTranscript(client, sessionID, record.workspace, after)
}

/** A member that never had its slot: its deadline starts once it has one (runs.ts driveInSlot). */
const stillQueued = (record: TaskRecord) =>
  record.parallel === true && record.sessions.length === 0 && record.turnStartedAt === record.createdAt

async function takeOver(runs: Runs, record: TaskRecord): Promise<void> {
  // Written with the next save below (or the settling): the owner is this process from now on.
  const remember = (edit: (r: TaskRecord) => void) =>
    void runs.store.update(record, edit, { quiet: true, deferred: true })
  remember((r) => Object.assign(r, { ownerPid: process.pid, ownerStart: selfStart() }))
  if (record.writable) {
    const lock = await runs.locks.read(record.workspace)
    if (lock?.taskID === record.id) await runs.locks.set(record.workspace, record.id, lock.state, {})
  }
  const live: Live = { record, controller: new AbortController(), listeners: new Set(), done: Promise.resolve(record) }
  runs.live.set(record.id, live)
  const started = Date.parse(record.turnStartedAt ?? record.createdAt)
  try {
    const { client } = await runs.runtime.opencode()
    // The process may have died between creating the session and recording it: the title carries the task id.
    let sessionID = record.sessionID ?? (await findSessions(client, record.workspace, record.id))[0]
    // A creation the process sent just before it died may still be under way: look once more.
    if (!sessionID && record.brief)
      sessionID = await Bun.sleep(500).then(async () => (await findSessions(client, record.workspace, record.id))[0])
    remember((r) => {
      if (sessionID && !r.sessions.includes(sessionID)) r.sessions.push(sessionID)
      r.sessionID = sessionID
    })
    if (record.cancelAskedAt) {
      // Its parent asked to cancel it, and the process that heard it was killed before the cancel settled:
      // finished here, as asked, whether or not the session heard of it.
      if (sessionID) await abortSession(client, sessionID, record.workspace)
      // No transcript settles the task cancelled all the same, with what the workspace shows.
      const transcript = sessionID
        ? await attemptTranscript(client, record, sessionID).catch(() => undefined)
        : undefined
      live.done = runs.settle(live, { sessionID, outcome: { kind: "aborted" }, transcript }, started)
      await live.done
      return
    }
    let state = sessionID ? await sessionState(client, sessionID, record.workspace) : "missing"
    // A brief sent just before the process died may not have made the session busy yet: give it a moment.
    for (
      let waited = 0;
      sessionID &&
      state === "idle" &&
      waited < 5000 &&
      (await lastMessageRole(client, sessionID, record.workspace)) === "user";
      waited += 250
    ) {
      await Bun.sleep(250)
      state = await sessionState(client, sessionID, record.workspace)
    }
    if (sessionID && state === "busy") {
      runs.live.delete(record.id)
      runs.launch(record, "", true, undefined, record.parallel)
      await runs.store.save(record)
      return
    }
    if (sessionID && state === "idle") {
      // No transcript settles the task as interrupted below, with its session id to look at.
      const transcript = await attemptTranscript(client, record, sessionID).catch(() => undefined)
      // The process died between creating the session and sending the brief: send it now, under the
      // task's own deadline, rather than calling a task that never started interrupted.
      if (
        record.brief &&
        Date.now() < record.deadline &&
        (await lastMessageID(client, sessionID, record.workspace)) === undefined
      ) {
        runs.live.delete(record.id)
        runs.launch(record, record.brief, false, undefined, record.parallel)
        await runs.store.save(record)
        return
      }
      if (transcript?.text && !transcript.error) {
        live.done = runs.settle(live, { sessionID, outcome: { kind: "idle" }, transcript }, started)
        await live.done
        return
      }
      live.done = runs.settle(live, { sessionID, outcome: { kind: "idle" }, transcript }, started, {
        status: "interrupted",
        note: `The MCP server stopped while session ${sessionID} ran, and it ended without a report.`,
      })
      await live.done
      return
    }
    // The process died before the session existed: start it now, under the task's own deadline.
    if (!sessionID && record.brief && (stillQueued(record) || Date.now() < record.deadline)) {
      runs.live.delete(record.id)
      runs.launch(record, record.brief, false, undefined, record.parallel)
      await runs.store.save(record)
      return
    }
    live.done = runs.settle(live, { sessionID: undefined, outcome: { kind: "aborted" } }, started, {
      status: "interrupted",
      note: sessionID
        ? `The MCP server stopped while this task ran; its session ${sessionID} no longer exists.`
        : "The MCP server stopped before the task's session started.",
    })
    await live.done
  } catch (error) {
    runs.live.delete(record.id)
    const failed = (r: TaskRecord) =>
      Object.assign(r, {
        status: "interrupted",
        note: `Recovery after a restart failed: ${describe(error)}`,
        finishedAt: new Date().toISOString(),
      })
    await runs.store.update(record, failed)
    // As above: a claim left behind is taken back once this process is gone.
    await runs.owners.release(record.id).catch(() => undefined)
  }
}
