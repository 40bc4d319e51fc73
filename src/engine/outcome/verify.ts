// The product's own check of a worker's result: the parent's `verify` command, run by this server (not
// by the agent, after its session is gone) in the runner's read-only, network-off sandbox on what the
// worker left: the workspace in place, the worktree when isolated. The exit code is the sandbox's and the
// digest the runner's, so the parent reads facts; the model's word never enters them.
// The check's own definition (workspace/snapshot/definitions.ts: build files, scripts, tests, configs) is graded
// as it was before the worker: when the worker changed any of it, the command runs on the workspace seen
// through a tmpfs overlay with those files restored from the task's start (workspace/snapshot/frozen.ts), and the
// command as the worker left it runs too, reported beside the grade, never in its place.
import { describe, fail } from "../../errors"
import { renderDigest } from "../../runner/digest"
import { createRun, digestRun, logPath, runFacts, saveRun } from "../../runner/logs"
import { type HostContext, hostFs, planSandbox, runSandboxed, type SandboxProfile } from "../../sandbox"
import {
  type DefinitionSelection,
  changedDefinition,
  definitionState,
  type FreezeInput,
  parentsOf,
  RESTORE_SCRIPT,
  readFrozen,
} from "../../workspace/snapshot"
import type { CheckRun, DelegationResult, Status, TaskRecord, Verification } from "../records"
import { shownName } from "../../workspace/names"

/** The command's bounds: characters, and the seconds it may run before it is killed. */
const VERIFY_LIMITS = { maxChars: 1000, timeoutS: 300 } as const

/** Changed definition files named in a result; past this, one entry counts the rest. */
const MAX_NAMED = 50
/** Characters of each named path. */
const MAX_NAME = 300

const PROFILE: SandboxProfile = { kind: "runner", workspace: "read_only", network: "disabled" }
/** What the process wrapper keeps in memory of each stream; the log has the rest, up to its bound. */
const IN_MEMORY_BYTES = 4096
/** The host copy of a verification's output: its head and tail up to this, the cut said between them. */
export const VERIFY_LOG_BYTES = 16_777_216
// Control characters (newlines included): a command the parent cannot read back on one line is refused.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f]/

/** Refuses a `verify` the product will not run, saying what is wrong; undefined passes. Pure. */
export function checkVerify(command: string | undefined): void {
  if (command === undefined) return
  const next = `Pass one shell command line of at most ${VERIFY_LIMITS.maxChars} characters, e.g. "bun test x.test.ts".`
  if (!command.trim()) throw fail("Usage", "verify is empty.", next)
  if (command.length > VERIFY_LIMITS.maxChars)
    throw fail("Usage", `verify has ${command.length} characters, over the limit of ${VERIFY_LIMITS.maxChars}.`, next)
  if (CONTROL.test(command))
    throw fail(
      "Usage",
      "verify contains a control character (a newline, tab or escape).",
      `${next} Join steps with &&.`,
    )
}

/** A turn the agent finished is verified; a failed, timed-out, cancelled or interrupted one is not. */
export const verifies = (status: Status) => status === "succeeded" || status === "needs_review"

export interface VerifyPlace {
  workspace: string
  host: HostContext
  runsDir: string
  taskID: string
  /** Where the task's frozen definition is (frozen.ts). */
  frozenDir: string
  /** Which files are the definition: the command's and the parent's verify_frozen. */
  selection: Omit<DefinitionSelection, "command">
}

/** What a run restores first: the frozen archive, and the paths the worker changed. */
interface Restore {
  archive: Uint8Array
  changed: string[]
}

/** Where a task's definition is frozen and read back: an isolated worker's worktree is admitted as its own. */
export function freezeInput(dir: string, record: TaskRecord, host: HostContext): FreezeInput {
  const owner = record.isolation && { ...host, worktrees: { ...host.worktrees!, owner: record.isolation.patchId } }
  return {
    workspace: record.workspace,
    host: owner || host,
    dir,
    taskID: record.id,
    selection: { command: record.verify ?? "", globs: record.verifyFrozen },
  }
}

/** Grades `command`; never rejects: a command that could not run is a failed verification, saying why. */
export async function runVerification(command: string, place: VerifyPlace): Promise<Verification> {
  const frozen = await readFrozen(place.frozenDir, place.taskID)
  if (frozen.kind === "unfrozen") return { command, ...(await runCheck(command, place)), unfrozen: frozen.why }
  const selection = { ...place.selection, command }
  let now: Record<string, string>
  try {
    now = await definitionState(place.workspace, place.host, selection)
  } catch (error) {
    const unfrozen = `the definition files could not be listed: ${describe(error)}`
    return { command, ...(await runCheck(command, place)), unfrozen }
  }
  const changed = changedDefinition(frozen.manifest.files, now)
  if (!changed.length) return { command, ...(await runCheck(command, place)), definitionChanged: [] }
  const graded = await runCheck(command, place, { archive: frozen.archive, changed })
  const asLeft = await runCheck(command, place)
  // File names are the worker's text: each is cut, and so is the list.
  const cut = changed.slice(0, MAX_NAMED).map((path) => (path.length > MAX_NAME ? `${path.slice(0, MAX_NAME)}…` : path))
  const named = changed.length > MAX_NAMED ? [...cut, `(and ${changed.length - MAX_NAMED} more)`] : cut
  return { command, ...graded, definitionChanged: named, asLeft }
}

/** Runs `command` once, on the workspace as left or with `restore` applied in a tmpfs overlay; never rejects. */
async function runCheck(command: string, place: VerifyPlace, restore?: Restore): Promise<CheckRun> {
  const started = Date.now()
  try {
    const plan = planSandbox(
      { profile: PROFILE, workspace: place.workspace, host: place.host, overlay: restore !== undefined },
      hostFs,
    )
    const run = await createRun(place.runsDir, {
      sessionID: `verify:${place.taskID}`,
      agent: "verify",
      profile: plan.profile,
      workspace: plan.workspace,
      command,
    })
    const log = logPath(place.runsDir, run.id)
    const argv = restore
      ? [
          "/bin/bash",
          "-c",
          RESTORE_SCRIPT,
          "restore",
          ...parentsOf(restore.changed),
          "--",
          ...restore.changed,
          "--",
          command,
        ]
      : ["/bin/bash", "-c", command]
    const result = await runSandboxed(plan, argv, {
      timeoutMs: VERIFY_LIMITS.timeoutS * 1000,
      maxOutputBytes: IN_MEMORY_BYTES,
      logFile: log,
      logLimitBytes: VERIFY_LOG_BYTES,
      stdin: restore?.archive,
    })
    const digest = await digestRun(run, log, result)
    // The run's record is housekeeping for log retention; the verification stands without it.
    await saveRun(place.runsDir, run).catch(() => undefined)
    const failure = result.failure
      ? `The sandbox could not start (${result.failure.code}): ${result.failure.detail}\n`
      : ""
    return {
      exitCode: result.failure ? null : result.exitCode,
      durationMs: Math.round(result.durationMs),
      digest: failure + renderDigest(digest, runFacts(result, log)),
    }
  } catch (error) {
    return { exitCode: null, durationMs: Date.now() - started, digest: `could not run: ${describe(error)}` }
  }
}

/**
 * A failed check makes a succeeded result needs_review, with the reason first in warnings and next; a
 * passing one leaves the agent's status. Either way the result carries the verification. Pure.
 */
export function applyVerification(result: DelegationResult, verification: Verification): void {
  result.verification = verification
  if (verification.exitCode !== 0) {
    const how =
      verification.exitCode === null
        ? "did not complete (killed, timed out, or could not run)"
        : `exited ${verification.exitCode}`
    const reason = `The verification command \`${verification.command}\` ${how}, whatever the report says.`
    if (result.status === "succeeded") result.status = "needs_review"
    result.warnings = [reason, ...(result.warnings ?? [])]
    const then = "Read verification.digest, then task_continue with the failures or fix them."
    result.next = `${reason} ${then} ${result.next ?? ""}`.trim()
  }
  // Said first: a grade on a check the worker rewrote, or one that could not be held, is not evidence alone.
  const warning = definitionWarning(verification)
  if (!warning) return
  if (result.status === "succeeded") result.status = "needs_review"
  result.warnings = [warning, ...(result.warnings ?? [])]
  result.next = `${warning} Read those changes before trusting either run. ${result.next ?? ""}`.trim()
}

/** What the parent must know about the check's own definition; undefined when the worker left it alone. */
function definitionWarning(verification: Verification): string | undefined {
  if (verification.unfrozen)
    return (
      `The check's definition could not be held as it was before the worker (${verification.unfrozen}): it ` +
      "was graded on the workspace as the worker left it, build and test files included."
    )
  const changed = verification.definitionChanged ?? []
  if (!changed.length) return undefined
  const left = verification.asLeft
  const asLeft = left
    ? `; as the worker left them the command exited ${left.exitCode ?? "without a code"} (verification.as_left)`
    : ""
  return (
    `The worker changed the check's definition (${changed.map(shownName).join(", ")}): the grade ran on those ` +
    `files as they were before it${asLeft}.`
  )
}
