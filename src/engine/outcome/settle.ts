// How a turn ends, carried out: ending-decision.ts decides the status, error and what becomes of the session;
// here the transcript becomes the result, the workspace is measured with git, the session is parked,
// removed, preserved or quarantined as decided, and the writer state is
// released only once a writer's session is confirmed removed. A full disk loses no outcome: writer
// states that cannot be written become warnings, and the record store keeps what it cannot write.
import { stat } from "node:fs/promises"
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { AppError, describe } from "../../errors"
import { abortSession, forkSession, removeSession } from "../../opencode/session"
import { autorunWarning, MAX_FLAGS_NAMED } from "../../workspace/snapshot"
import { collectPatch, readPatchRecord } from "../../workspace/patches"
import type { Turn } from "../turn"
import { decideEnding, type Ending, type Forced, type Hold } from "./ending-decision"
import { measureEvidence, nextStep } from "./evidence"
import type { WriterLocks, Runtime } from "../capacity"
import { boundReport, bytesOf, fromTranscript } from "./result"
import { type DelegationResult, type TaskRecord, settleSegment, spendingOf } from "../records"
import { applyScope } from "./scope"
import type { TaskStore } from "../store"
import { applyOutput, judgeOutput } from "./output-schema"
import { applyVerification, freezeInput, runVerification, verifies } from "./verify"
import { shownName } from "../../workspace/names"

/** How long a settling task waits for a session OpenCode was still creating when the task ended. */
const LATE_SESSION_WAIT_MS = 15_000

export type { Forced } from "./ending-decision"

export class Settler {
  constructor(
    private readonly runtime: Runtime,
    private readonly store: TaskStore,
    private readonly locks: WriterLocks,
  ) {}

  /** The turn's result, the workspace measured, the session disposed of, the writer state released; saved. */
  async settle(record: TaskRecord, turn: Turn, started: number, forced?: Forced): Promise<TaskRecord> {
    const { client } = await this.runtime.opencode().catch(() => ({ client: undefined }))
    const ending = decideEnding({
      outcome: turn.outcome,
      transcript: turn.transcript,
      overBudget: turn.overBudget,
      forced,
      writable: record.writable,
      lastProgress: record.progress.at(-1),
      preserveSessions: this.runtime.flags.preserveSessions,
      reachable: client !== undefined,
      sessionID: turn.sessionID,
      late: turn.late !== undefined,
    })
    const { status } = ending
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
    const counted = (r: TaskRecord) => settleSegment(spendingOf(r), turn.sessionID, turn.transcript)
    void this.store.update(record, counted, { quiet: true, deferred: true })
    const spending = spendingOf(record)
    Object.assign(result, { tokens: { ...spending.spent.tokens }, cost: spending.spent.cost })
    // The evidence (git, the runner's log, planted metadata) is measured while the session is parked.
    const evidence = this.runtime
      .config()
      .then((config) => measureEvidence(record, turn.sessionID, this.runtime.paths.runsDir, this.runtime.host(config)))
    result.error = ending.error
    if (ending.next) result.next = ending.next
    if (ending.failure) Object.assign(result, ending.failure)
    if (record.userRole) result.userRole = record.userRole.name
    if (record.fallbackFrom?.length) result.fallbackFrom = record.fallbackFrom.map(({ model, why }) => ({ model, why }))
    // A full disk must not keep the workspace locked: a state that cannot be written is reported, and
    // the release (a removal) still happens.
    const unwritten: string[] = []
    const setLock = (...args: Parameters<WriterLocks["set"]>) =>
      this.locks.set(...args).catch((error: unknown) => void unwritten.push(describe(error)))
    const release = await this.dispose(record, ending, turn, result, client, setLock)
    // Before the writer state is released: what is checked is this worker's result, not a later writer's.
    const verification = record.verify && verifies(status) ? await this.verify(record, record.verify) : undefined
    if (release && record.writable) await this.locks.clear(record.workspace, record.id)
    const { files, run, planted, disk } = await evidence
    if (files) result.files = files
    const leftOut = record.isolation ? await this.collect(record, result) : undefined
    if (run) result.run = run
    if (planted.length) {
      // Bounded for the parent: the first few named with their rule, the rest counted.
      const named = planted.slice(0, MAX_FLAGS_NAMED)
      const more = planted.length - named.length
      result.autorun = { files: named, ...(more ? { more } : {}) }
      const lines = named.map(({ path, change }) => `${shownName(path)} (${change})`)
      result.warnings = [autorunWarning(more ? [...lines, `and ${more} more`] : lines)]
      if (result.status === "succeeded") result.status = "needs_review"
    }
    if (verification) applyVerification(result, verification)
    // Judged on the final answer of a finished turn only: a failed or timed-out one has no answer to judge.
    if (record.outputSchema && verifies(status))
      applyOutput(result, await judgeOutput(record.outputSchema, result.report))
    if (record.reviewed) result.reviewed = record.reviewed
    if (record.scope)
      applyScope(result, { scope: record.scope, leftOut, disk, isolated: record.isolation !== undefined })
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
    const finishedAt = new Date().toISOString()
    const settled = (r: TaskRecord) =>
      Object.assign(r, { status: result.status, result, finishedAt, resultReadAt: undefined, note: forced?.note })
    const unsaved = await this.store.update(record, settled).then(
      () => undefined,
      (error: unknown) => error,
    )
    if (unsaved) {
      // The outcome is not lost: this process answers from memory and writes it once there is room.
      const warning =
        `The task record could not be written: ${describe(unsaved)} This process keeps it and writes it as soon ` +
        "as there is room; until then other processes see the task as running."
      const warned = (r: TaskRecord) => {
        result.warnings = [...(result.warnings ?? []), warning]
        r.result = result
      }
      // The record could not be settled and saved either: the store keeps this state and writes it when it can.
      await this.store.update(record, warned, { quiet: true }).catch(() => undefined)
    }
    return record
  }

  /** The worker's `verify` on its result; an isolated worker's worktree counts only while its lane is this task's. */
  private async verify(record: TaskRecord, command: string) {
    try {
      const config = await this.runtime.config()
      const { workspace, host, dir, taskID, selection } = freezeInput(
        this.runtime.paths.frozenDir,
        record,
        this.runtime.host(config),
      )
      const place = { workspace, host, runsDir: this.runtime.paths.runsDir, taskID, frozenDir: dir }
      return await runVerification(command, { ...place, selection: { globs: selection.globs } })
    } catch (error) {
      return { command, exitCode: null, durationMs: 0, digest: `could not run: ${describe(error)}` }
    }
  }

  /**
   * Carries out the ending's disposal of the session (disposal-decision.ts): true when the workspace is
   * released now.
   */
  private async dispose(
    record: TaskRecord,
    ending: Ending,
    turn: Turn,
    result: DelegationResult,
    client: OpencodeClient | undefined,
    setLock: (...args: Parameters<WriterLocks["set"]>) => Promise<void>,
  ): Promise<boolean> {
    const { sessionID } = turn
    const hold = async ({ state, extra }: Hold) => {
      if (record.writable) await setLock(record.workspace, record.id, state, extra)
    }
    // The session the record names from now on, written with the settled record.
    const naming = (edit: (r: TaskRecord) => void) =>
      void this.store.update(record, edit, { quiet: true, deferred: true })
    if (record.writable) await setLock(record.workspace, record.id, "cleaning", { sessionID })
    if (ending.transcript) result.transcript = ending.transcript
    switch (ending.disposal) {
      case "gone":
      case "keep":
        naming((r) => {
          r.sessionID = sessionID
        })
        return true
      case "none":
        return true
      case "park": {
        const parked = await forkSession(client!, sessionID!, record.workspace)
        const removed = await removeSession(client!, sessionID!, record.workspace)
        naming((r) => {
          r.sessionID = parked
          if (parked) r.sessions.push(parked)
        })
        if (parked) result.transcript = `opencode export ${parked} (the conversation, kept for task_continue)`
        if (removed) return true
        await hold(ending.unremoved!.hold)
        result.next = ending.unremoved!.next
        return false
      }
      case "late": {
        await hold(ending.hold!)
        // A late session usually comes within a second (a cancel right after the start): reconciled before the
        // task settles, the workspace is free when task_cancel answers. One that takes longer is reconciled in
        // the background; reconciling is best effort, the quarantine set just above holds until a restart if
        // it fails.
        const reconciled = this.reconcileLate(record, turn.late!).catch(() => undefined)
        await Promise.race([reconciled, Bun.sleep(LATE_SESSION_WAIT_MS)])
        return false
      }
      case "preserve":
      case "quarantine":
        await hold(ending.hold!)
        return false
    }
  }

  /**
   * An isolated worker's edits become its patch, whatever the status (a timed-out worker's partial
   * work is kept too); a patch that cannot be collected leaves the worktree for patch_discard. Returns
   * the paths a scope left out of the patch; undefined when no patch was collected.
   */
  private async collect(record: TaskRecord, result: DelegationResult): Promise<string[] | undefined> {
    const patchId = record.isolation!.patchId
    try {
      const stored = await readPatchRecord(this.runtime.paths.patchesDir, patchId)
      if (!stored) throw new Error(`its record ${patchId} is gone`)
      const config = await this.runtime.config()
      const patch = await collectPatch(
        stored,
        this.runtime.paths.patchesDir,
        this.runtime.host(config),
        config.maxPatchBytes,
        record.scope,
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
        ? `Review the patch with patch_show (patch_id "${patch.id}"), then patch_apply with that patch_id and ` +
          `digest "${patch.digest}" to write it into ${record.isolation!.source}; patch_discard removes it and its ` +
          `worktree.`
        : `The worker changed nothing; patch_discard (patch_id "${patch.id}") removes its worktree.`
      return patch.outOfScope ?? []
    } catch (error) {
      result.warnings = [
        ...(result.warnings ?? []),
        `The worker's edits could not be collected as a patch: ${describe(error)} They stay in ${record.workspace} ` +
          `until patch_discard (patch_id "${patchId}").`,
      ]
      if (result.status === "succeeded") result.status = "needs_review"
      // A patch over maxPatchBytes: the next step is the one the refusal names, not the generic one.
      if (error instanceof AppError && error.data?.oversize) result.next = error.hint
      return undefined
    }
  }

  /** A session whose creation outlived its task: abort it, then remove (or preserve) it, then release the workspace. */
  private async reconcileLate(record: TaskRecord, late: Promise<string | undefined>) {
    const sessionID = await late
    if (!sessionID) return record.writable ? this.locks.clear(record.workspace, record.id) : undefined
    await this.store.update(record, (r) => void r.sessions.push(sessionID))
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
