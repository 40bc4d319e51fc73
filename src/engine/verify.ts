// The product's own check of a worker's result: the parent's `verify` command, run by this server (not
// by the agent, after its session is gone) in the runner's read-only, network-off sandbox on what the
// worker left: the workspace in place, the worktree when isolated. The exit code is the sandbox's and the
// digest the runner's, so the parent reads facts; the model's word never enters them.
import { describe, fail } from "../errors"
import { createDigester, renderDigest } from "../runner/digest"
import { createRun, eachLine, logPath, saveRun } from "../runner/logs"
import { type HostContext, hostFs, planSandbox, runSandboxed, type SandboxProfile } from "../sandbox"
import type { DelegationResult, Status } from "./result"

/** The command's bounds: characters, and the seconds it may run before it is killed. */
const VERIFY_LIMITS = { maxChars: 1000, timeoutS: 300 } as const

/** What the parent receives as `verification`. exitCode is null when the command was killed or never ran. */
export interface Verification {
  command: string
  exitCode: number | null
  durationMs: number
  /** The runner's failure digest of the output (bounded), or why the command could not run. */
  digest: string
}

const PROFILE: SandboxProfile = { kind: "runner", workspace: "read_only", network: "disabled" }
/** What the process wrapper keeps in memory of each stream; the log has everything. */
const IN_MEMORY_BYTES = 4096
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
}

/** Runs `command` once; never rejects: a command that could not run is a failed verification, saying why. */
export async function runVerification(command: string, place: VerifyPlace): Promise<Verification> {
  const started = Date.now()
  try {
    const plan = planSandbox({ profile: PROFILE, workspace: place.workspace, host: place.host }, hostFs)
    const run = await createRun(place.runsDir, {
      sessionID: `verify:${place.taskID}`,
      agent: "verify",
      profile: plan.profile,
      workspace: plan.workspace,
      command,
    })
    const log = logPath(place.runsDir, run.id)
    const result = await runSandboxed(plan, ["/bin/bash", "-c", command], {
      timeoutMs: VERIFY_LIMITS.timeoutS * 1000,
      maxOutputBytes: IN_MEMORY_BYTES,
      logFile: log,
    })
    const digester = createDigester()
    await eachLine(log, (line) => digester.push(line))
    const digest = digester.result()
    Object.assign(run, { finishedAt: new Date().toISOString(), exitCode: result.exitCode, lines: digest.lines })
    // The run's record is housekeeping for log retention; the verification stands without it.
    await saveRun(place.runsDir, run).catch(() => undefined)
    const failure = result.failure
      ? `The sandbox could not start (${result.failure.code}): ${result.failure.detail}\n`
      : ""
    const facts = {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      durationMs: result.durationMs,
      logPath: log,
      bytesSeen: result.log?.bytesSeen,
    }
    return {
      command,
      exitCode: result.failure ? null : result.exitCode,
      durationMs: Math.round(result.durationMs),
      digest: failure + renderDigest(digest, facts),
    }
  } catch (error) {
    return { command, exitCode: null, durationMs: Date.now() - started, digest: `could not run: ${describe(error)}` }
  }
}

/**
 * A failed check makes a succeeded result needs_review, with the reason first in warnings and next; a
 * passing one leaves the agent's status. Either way the result carries the verification. Pure.
 */
export function applyVerification(result: DelegationResult, verification: Verification): void {
  result.verification = verification
  // The check runs the code as the worker left it: a test file it edited proves only the edited test.
  const named = (result.files ?? []).filter((file) => names(verification.command, file.path)).map((f) => f.path)
  if (named.length)
    result.warnings = [
      ...(result.warnings ?? []),
      `The worker changed ${named.join(", ")}, which the verification command names: read that diff first.`,
    ]
  if (verification.exitCode === 0) return
  const how =
    verification.exitCode === null
      ? "did not complete (killed, timed out, or could not run)"
      : `exited ${verification.exitCode}`
  const reason = `The verification command \`${verification.command}\` ${how}, whatever the report says.`
  if (result.status === "succeeded") result.status = "needs_review"
  result.warnings = [reason, ...(result.warnings ?? [])]
  result.next =
    `${reason} Read verification.digest, then task_continue with the failures or fix them. ${result.next ?? ""}`.trim()
}

/** True when `command` mentions `path` as a whole path or its tail after a `/` (`./a.test.ts`, `src/a.test.ts`). */
function names(command: string, path: string): boolean {
  for (let at = command.indexOf(path); at >= 0; at = command.indexOf(path, at + 1)) {
    const before = command[at - 1]
    const after = command[at + path.length]
    if ((before === undefined || /[\s/'"=]/.test(before)) && (after === undefined || /[\s'";:)]/.test(after)))
      return true
  }
  return false
}
