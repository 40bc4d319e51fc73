// What becomes of a task's session once its turn ended. Only a writer's session must be confirmed
// removed before the workspace is free; everything else is decided from what is known at that moment,
// here, so the choice can be read (and tested) apart from the calls that carry it out (settle.ts).

export interface DisposalFacts {
  /** The task holds the workspace's writer state. */
  writable: boolean
  /** OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS: sessions are kept for diagnosis. */
  preserveSessions: boolean
  /** The shared server stopped while the turn ran. */
  lost: boolean
  /** The shared server answers, so a session can be forked and removed. */
  reachable: boolean
  /** The turn's session, when one was created. */
  sessionID?: string
  /** A session creation was still in flight when the turn ended. */
  late: boolean
}

/**
 * - `gone`: the process that ran the session stopped; nothing can write any more, the workspace is free.
 * - `preserve`: the session stays for diagnosis, and so does the writer state.
 * - `keep`: a read-only task's own idle session stays parked for task_continue.
 * - `park`: a never-run fork keeps the conversation; the original is removed, and the workspace freed
 *   only once that removal is confirmed.
 * - `late`: quarantined until the session still being created exists and is removed.
 * - `quarantine`: a session exists but OpenCode cannot be reached to remove it.
 * - `none`: there is no session; the workspace is free.
 */
export type Disposal = "gone" | "preserve" | "keep" | "park" | "late" | "quarantine" | "none"

export function disposal(facts: DisposalFacts): Disposal {
  if (facts.lost) return "gone"
  if (facts.sessionID && facts.preserveSessions) return "preserve"
  if (facts.sessionID && !facts.writable) return "keep"
  if (facts.sessionID && facts.reachable) return "park"
  if (facts.late) return "late"
  if (facts.sessionID) return "quarantine"
  return "none"
}
