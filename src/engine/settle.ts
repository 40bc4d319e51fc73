// How a turn ends: the transcript becomes the result, the workspace is measured with git, the session
// is parked, removed, preserved or quarantined (disposal.ts decides which), and the writer state is
// released only once a writer's session is confirmed removed. A full disk loses no outcome: writer
// states that cannot be written become warnings, and the record store keeps what it cannot write.
import { stat } from "node:fs/promises"
import { AppError, describe } from "../errors"
import { abortSession, forkSession, removeSession } from "../opencode/session"
import { hostContext } from "../sandbox"
import { autorunWarning } from "../workspace/autorun"
import { collectPatch } from "../workspace/patch"
import { readPatchRecord } from "../workspace/patches"
import { statusOf, type Turn } from "./delegate"
import { disposal } from "./disposal"
import { classifyFailure } from "./failure"
import { measureEvidence, nextStep } from "./evidence"
import type { WriterLocks } from "./locks"
import { boundReport, bytesOf, fromTranscript, type DelegationResult, type Status } from "./result"
import type { Runtime } from "./runtime"
import type { TaskRecord, TaskStore } from "./tasks"
import { settleSegment, spendingOf } from "./usage"
import { applyOutput, judgeOutput } from "./output-schema"
import { applyVerification, runVerification, verifies } from "./verify"

/** An ending decided before the turn is judged (recovery: a session that ended without a report). */
export interface Forced {
  status: Status
  note: string
}

export class Settler {
  constructor(
    private readonly runtime: Runtime,
    private readonly store: TaskStore,
    private readonly locks: WriterLocks,
  ) {}

  /** The turn's result, the workspace measured, the session disposed of, the writer state released; saved. */
  async settle(record: TaskRecord, turn: Turn, started: number, forced?: Forced): Promise<TaskRecord> {
    const { client } = await this.runtime.opencode().catch(() => ({ client: undefined }))
    const status = forced?.status ?? statusOf(turn.outcome, turn.transcript, turn.overBudget)
    const result = fromTranscript(
      {
        role: record.role,
        workspace: record.workspace,
        taskID: record.id,
        sessionID: turn.sessionID,
        durationMs: Date.now() - started,
        status,
      },
      turn.transcript,
    )
    // Tokens and cost are the task's, over every session and turn it had, not this transcript's alone.
    const spending = spendingOf(record)
    settleSegment(spending, turn.sessionID, turn.transcript)
    Object.assign(result, { tokens: { ...spending.spent.tokens }, cost: spending.spent.cost })
    // The evidence (git, the runner's log, planted metadata) is measured while the session is parked.
    const evidence = this.runtime
      .config()
      .then((config) =>
        measureEvidence(
          record,
          turn.sessionID,
          this.runtime.paths.runsDir,
          hostContext(this.runtime.flags, config.sandboxRuntime.trustedRoots),
        ),
      )
    if (turn.outcome.kind === "error") result.error = turn.outcome.message
    if (turn.overBudget) result.error = `Stopped: ${turn.overBudget}.`
    // OpenCode retries a failing provider until the deadline: say so, rather than a bare timeout.
    const retrying = status === "timed_out" ? record.progress.at(-1) : undefined
    if (retrying?.startsWith("retrying ("))
      result.error = `The deadline passed while OpenCode was ${retrying}: the provider kept failing.`
    const lost = turn.outcome.kind === "lost"
    if (lost) {
      result.error = "server_lost: the shared OpenCode server stopped while the task ran; nothing runs for it any more."
      result.next = record.writable
        ? "Edits made before the server stopped are kept (see files_changed); inspect them, then start a new worker for what is left. The next call starts a new server."
        : "Retried once on a new server, which stopped too; run `opencode-mcp-orchestrator doctor`, then retry."
    }
    // Why it failed, from OpenCode's error object, else the provider's last retry message, else our own line.
    const cause = turn.outcome.kind === "error" ? turn.outcome.error : undefined
    const failure = classifyFailure({
      status,
      error: cause ?? turn.transcript?.fault,
      retrying: retrying?.startsWith("retrying (") ? retrying : undefined,
      text: result.error,
      lost,
      overBudget: turn.overBudget !== undefined,
    })
    if (failure) {
      Object.assign(result, { errorKind: failure.kind, advice: failure.advice, retryAfterS: failure.retryAfterS })
      // The status's own next step (timeout, cancel, lost server) names this task's budget and edits.
      if (!["timeout", "cancelled", "server_lost"].includes(failure.kind)) result.next ??= failure.next
    }
    // A full disk must not keep the workspace locked: a state that cannot be written is reported, and
    // the release (a removal) still happens.
    const unwritten: string[] = []
    const setLock = (...args: Parameters<WriterLocks["set"]>) =>
      this.locks.set(...args).catch((error: unknown) => void unwritten.push(describe(error)))
    if (record.writable) await setLock(record.workspace, record.id, "cleaning", { sessionID: turn.sessionID })
    let release = true
    const sessionID = turn.sessionID
    switch (
      disposal({
        writable: record.writable,
        preserveSessions: this.runtime.flags.preserveSessions,
        lost,
        reachable: client !== undefined,
        sessionID,
        late: turn.late !== undefined,
      })
    ) {
      case "gone":
        record.sessionID = sessionID
        break
      case "keep":
        record.sessionID = sessionID
        result.transcript = `opencode export ${sessionID} (the conversation, kept for task_continue)`
        break
      case "preserve":
        release = false
        result.transcript = `preserved session ${sessionID}: opencode export ${sessionID}`
        if (record.writable)
          await setLock(record.workspace, record.id, "preserved", {
            sessionID,
            reason: `session ${sessionID} kept for diagnosis (${status})`,
          })
        break
      case "park": {
        const parked = await forkSession(client!, sessionID!, record.workspace)
        const removed = await removeSession(client!, sessionID!, record.workspace)
        if (parked) {
          record.sessionID = parked
          record.sessions.push(parked)
          result.transcript = `opencode export ${parked} (the conversation, kept for task_continue)`
        } else record.sessionID = undefined
        if (!removed) {
          release = false
          const reason = `session ${sessionID} could not be confirmed removed after the task ended (${status})`
          if (record.writable) await setLock(record.workspace, record.id, "quarantined", { sessionID, reason })
          result.next = `The workspace is quarantined: ${reason}. Check with opencode that the session is gone, inspect git status, then restart the MCP server.`
        }
        break
      }
      case "late": {
        release = false
        const reason = `the task ended (${status}) while OpenCode was still creating its session; released once that session is removed`
        if (record.writable) await setLock(record.workspace, record.id, "quarantined", { reason })
        // Reconciling a late session is best effort: the quarantine set just above holds until a restart if it fails.
        void this.reconcileLate(record, turn.late!).catch(() => undefined)
        break
      }
      case "quarantine": {
        release = false
        const reason = `OpenCode could not be reached to remove session ${sessionID}`
        if (record.writable) await setLock(record.workspace, record.id, "quarantined", { sessionID, reason })
        break
      }
      case "none":
    }
    // Before the writer state is released: what is checked is this worker's result, not a later writer's.
    const verification = record.verify && verifies(status) ? await this.verify(record, record.verify) : undefined
    if (release && record.writable) await this.locks.clear(record.workspace, record.id)
    const { files, run, planted } = await evidence
    if (files) result.files = files
    if (record.isolation) await this.collect(record, result)
    if (run) result.run = run
    if (planted.length) {
      result.warnings = [autorunWarning(planted)]
      if (result.status === "succeeded") result.status = "needs_review"
    }
    if (verification) applyVerification(result, verification)
    // Judged on the final answer of a finished turn only: a failed or timed-out one has no answer to judge.
    if (record.outputSchema && verifies(status)) applyOutput(result, judgeOutput(record.outputSchema, result.report))
    // Found before the turn ran (lifecycle.ts: a mode weaker than the task's previous call's): said first.
    if (record.turnWarnings?.length) result.warnings = [...record.turnWarnings, ...(result.warnings ?? [])]
    if (!release && unwritten.length)
      result.warnings = [
        ...(result.warnings ?? []),
        `The workspace's writer state could not be recorded: ${unwritten[0]}`,
      ]
    result.next ??= nextStep(result.status, record, forced?.note)
    // A log that cannot be measured counts as nothing kept out, never as a failure.
    const logBytes = run
      ? await stat(run.log).then(
          (info) => info.size,
          () => 0,
        )
      : 0
    // A scout's or worker's long report reaches the parent cut; the whole stays in the kept session.
    if (record.role !== "runner") result.report = boundReport(result, (await this.runtime.config()).maxReportBytes)
    result.bytes = bytesOf(result, turn.transcript?.bytes ?? 0, logBytes)
    Object.assign(record, { status: result.status, result, finishedAt: new Date().toISOString(), note: forced?.note })
    record.revision++
    const unsaved = await this.store.save(record).then(
      () => undefined,
      (error: unknown) => error,
    )
    if (unsaved) {
      // The outcome is not lost: this process answers from memory and writes it once there is room.
      result.warnings = [
        ...(result.warnings ?? []),
        `The task record could not be written: ${describe(unsaved)} This process keeps it and writes it as soon as there is room; until then other processes see the task as running.`,
      ]
      // The record could not be settled and saved either: the store keeps this state and writes it when it can.
      await this.store.save(record).catch(() => undefined)
    }
    return record
  }

  /** The worker's `verify` on its result; an isolated worker's worktree counts only while its lane is this task's. */
  private async verify(record: TaskRecord, command: string) {
    try {
      const config = await this.runtime.config()
      const host = hostContext(this.runtime.flags, config.sandboxRuntime.trustedRoots)
      const owner = record.isolation && { ...host, worktrees: { ...host.worktrees!, owner: record.isolation.patchId } }
      const place = { workspace: record.workspace, runsDir: this.runtime.paths.runsDir, taskID: record.id }
      return await runVerification(command, { ...place, host: owner ?? host })
    } catch (error) {
      return { command, exitCode: null, durationMs: 0, digest: `could not run: ${describe(error)}` }
    }
  }

  /**
   * An isolated worker's edits become its patch, whatever the status (a timed-out worker's partial
   * work is kept too); a patch that cannot be collected leaves the worktree for patch_discard.
   */
  private async collect(record: TaskRecord, result: DelegationResult) {
    const patchId = record.isolation!.patchId
    try {
      const stored = await readPatchRecord(this.runtime.paths.patchesDir, patchId)
      if (!stored) throw new Error(`its record ${patchId} is gone`)
      const config = await this.runtime.config()
      const patch = await collectPatch(
        stored,
        this.runtime.paths.patchesDir,
        hostContext(this.runtime.flags, config.sandboxRuntime.trustedRoots),
        config.maxPatchBytes,
      )
      result.patch = {
        id: patch.id,
        digest: patch.digest!,
        files: patch.files!,
        summary: patch.summary!,
        bytes: patch.bytes!,
        diskBytes: patch.disk?.bytes,
        state: "waiting",
      }
      result.files = patch.files!.map((file) => ({ path: file.path, change: file.change }))
      if (patch.warnings) result.warnings = [...(result.warnings ?? []), ...patch.warnings]
      result.next ??= patch.files!.length
        ? `Review the patch with patch_show (patch_id "${patch.id}"), then patch_apply with that patch_id and digest "${patch.digest}" to write it into ${record.isolation!.source}; patch_discard removes it and its worktree.`
        : `The worker changed nothing; patch_discard (patch_id "${patch.id}") removes its worktree.`
    } catch (error) {
      result.warnings = [
        ...(result.warnings ?? []),
        `The worker's edits could not be collected as a patch: ${describe(error)} They stay in ${record.workspace} until patch_discard (patch_id "${patchId}").`,
      ]
      if (result.status === "succeeded") result.status = "needs_review"
      // A patch over maxPatchBytes: the next step is the one the refusal names, not the generic one.
      if (error instanceof AppError && error.data?.oversize) result.next = error.hint
    }
  }

  /** A session whose creation outlived its task: abort it, then remove (or preserve) it, then release the workspace. */
  private async reconcileLate(record: TaskRecord, late: Promise<string | undefined>) {
    const sessionID = await late
    if (!sessionID) return record.writable ? this.locks.clear(record.workspace, record.id) : undefined
    record.sessions.push(sessionID)
    record.revision++
    await this.store.save(record)
    const { client } = await this.runtime.opencode()
    await abortSession(client, sessionID, record.workspace)
    if (this.runtime.flags.preserveSessions) {
      if (record.writable)
        await this.locks.set(record.workspace, record.id, "preserved", {
          sessionID,
          reason: `session ${sessionID} kept for diagnosis (created after its task ended)`,
        })
      return
    }
    if (await removeSession(client, sessionID, record.workspace)) {
      if (record.writable) await this.locks.clear(record.workspace, record.id)
    } else if (record.writable)
      await this.locks.set(record.workspace, record.id, "quarantined", {
        sessionID,
        reason: `session ${sessionID}, created after its task ended, could not be confirmed removed`,
      })
  }
}
