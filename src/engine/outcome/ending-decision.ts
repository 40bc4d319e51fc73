// How a turn ends, decided from what is known once it stopped: its status, the error and its kind, the
// next step, and what becomes of its session and the workspace's writer state. Pure, so every ending
// can be read and table-tested apart from the calls that carry it out (settle.ts).
import type { WaitOutcome } from "../../opencode/session"
import type { Transcript } from "../../opencode/transcript"
import { statusOf, classifyFailure } from "../turn"
import { type Disposal, disposal } from "./disposal-decision"
import type { FailureKind, Status } from "../records"

/** An ending decided before the turn is judged (recovery: a session that ended without a report). */
export interface Forced {
  status: Status
  note: string
}

export interface EndingFacts {
  outcome: WaitOutcome
  transcript?: Transcript
  /** Why the turn was stopped for its spending, when it was. */
  overBudget?: string
  forced?: Forced
  writable: boolean
  /** The task's newest progress line: OpenCode's `retrying (...)` says the provider kept failing. */
  lastProgress?: string
  /** OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS: sessions are kept for diagnosis. */
  preserveSessions: boolean
  /** OpenCode answers, so a session can be forked and removed. */
  reachable: boolean
  /** The turn's session, when one was created. */
  sessionID?: string
  /** A session creation was still in flight when the turn ended. */
  late: boolean
}

/** A writer state that keeps the workspace held once the turn ended, and why. */
export interface Hold {
  state: "preserved" | "quarantined"
  /** Exactly what the writer state records: a late session has no id yet, and the held one's stays. */
  extra: { sessionID?: string; reason: string }
}

export interface Ending {
  status: Status
  /** The result's error line (the transcript's own, unless the way the turn ended says more). */
  error?: string
  next?: string
  failure?: { errorKind: FailureKind; advice: string; retryAfterS?: number }
  disposal: Disposal
  /** For preserve, late and quarantine: the workspace stays held, in this state. */
  hold?: Hold
  /** For park: what holds, and the next step, when the original session cannot be confirmed removed. */
  unremoved?: { hold: Hold; next: string }
  /** The result's transcript line when the turn's own session is the one kept (keep, preserve). */
  transcript?: string
}

const RETRYING = "retrying ("
/** Failure kinds whose status already names this task's budget and edits in its own next step. */
const OWN_NEXT: readonly FailureKind[] = ["timeout", "cancelled", "server_lost"]

const LOST_ERROR = "server_lost: the shared OpenCode server stopped while the task ran; nothing runs for it any more."
const LOST_WRITER_NEXT =
  "Edits made before the server stopped are kept (see files_changed); inspect them, then start a new worker " +
  "for what is left. The next call starts a new server."
const LOST_READER_NEXT =
  "Retried once on a new server, which stopped too; run `opencode-mcp-orchestrator doctor`, then retry."

export function decideEnding(facts: EndingFacts): Ending {
  const { outcome, transcript, overBudget, forced, sessionID } = facts
  const status = forced?.status ?? statusOf(outcome, transcript, overBudget)
  const lost = outcome.kind === "lost"
  // OpenCode retries a failing provider until the deadline: say so, rather than a bare timeout.
  const retrying = status === "timed_out" && facts.lastProgress?.startsWith(RETRYING) ? facts.lastProgress : undefined
  let error = transcript?.error
  if (outcome.kind === "error") error = outcome.message
  if (overBudget) error = `Stopped: ${overBudget}.`
  if (retrying) error = `The deadline passed while OpenCode was ${retrying}: the provider kept failing.`
  if (lost) error = LOST_ERROR
  let next = lost ? (facts.writable ? LOST_WRITER_NEXT : LOST_READER_NEXT) : undefined
  // Why it failed, from OpenCode's error object, else the provider's last retry message, else our own line.
  const found = classifyFailure({
    status,
    error: (outcome.kind === "error" ? outcome.error : undefined) ?? transcript?.fault,
    retrying,
    text: error,
    lost,
    overBudget: overBudget !== undefined,
  })
  if (found && !OWN_NEXT.includes(found.kind)) next ??= found.next
  const failure = found && { errorKind: found.kind, advice: found.advice, retryAfterS: found.retryAfterS }
  const kind = disposal({ ...facts, lost })
  const ending: Ending = { status, error, next, failure, disposal: kind }
  if (kind === "keep") ending.transcript = `opencode export ${sessionID} (the conversation, kept for task_continue)`
  if (kind === "preserve") {
    ending.transcript = `preserved session ${sessionID}: opencode export ${sessionID}`
    const reason = `session ${sessionID} kept for diagnosis (${status})`
    ending.hold = { state: "preserved", extra: { sessionID, reason } }
  }
  if (kind === "park") {
    const reason = `session ${sessionID} could not be confirmed removed after the task ended (${status})`
    ending.unremoved = {
      hold: { state: "quarantined", extra: { sessionID, reason } },
      next:
        `The workspace is quarantined: ${reason}. Check with opencode that the session is gone, ` +
        "inspect git status, then restart the MCP server.",
    }
  }
  if (kind === "late") {
    const reason =
      `the task ended (${status}) while OpenCode was still creating its session; ` +
      "released once that session is removed"
    ending.hold = { state: "quarantined", extra: { reason } }
  }
  if (kind === "quarantine")
    ending.hold = {
      state: "quarantined",
      extra: { sessionID, reason: `OpenCode could not be reached to remove session ${sessionID}` },
    }
  return ending
}
