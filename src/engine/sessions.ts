// What the `sessions` tool says of each session on the shared server, ours or anyone's: its state and
// age, decided from what OpenCode keeps (the session's times, its latest message) and, for our own
// tasks, the record's liveness. Pure: the tool reads OpenCode and the task records, this decides.
import type { Activity } from "./progress"

export const SESSION_STATES = ["busy", "idle", "stale"] as const
export type SessionState = (typeof SESSION_STATES)[number]

/** Busy with no event for this long is stale (stuck, or a provider that does not answer). */
export const DEFAULT_STALE_S = 300

export interface SessionFacts {
  id: string
  title: string
  directory: string
  agent?: string
  /** Epoch ms, as OpenCode keeps them. */
  created: number
  updated: number
  /** The latest message: an assistant message not yet completed, or a user message not yet answered, means busy. */
  latest?: { role: "user" | "assistant"; created: number; completed?: number }
}

export interface OurTask {
  id: string
  activity?: Activity
}

export interface SessionRow {
  session_id: string
  title: string
  directory: string
  agent?: string
  state: SessionState
  /** Seconds since the session was created. */
  age_s: number
  /** Seconds since its latest event as far as it is known (an update, a message, our task's liveness). */
  idle_s: number
  /** Ours: the task it belongs to. */
  task_id?: string
}

export function sessionRow(facts: SessionFacts, now: number, staleMs: number, ours?: OurTask): SessionRow {
  const latest = facts.latest
  const busy = latest !== undefined && (latest.role === "user" || latest.completed === undefined)
  const lastEvent = Math.max(facts.updated, latest?.completed ?? latest?.created ?? 0, ours?.activity ? Date.parse(ours.activity.at) : 0)
  const idleMs = Math.max(0, now - lastEvent)
  return {
    session_id: facts.id,
    title: facts.title,
    directory: facts.directory,
    agent: facts.agent,
    state: busy ? (idleMs > staleMs ? "stale" : "busy") : "idle",
    age_s: Math.max(0, Math.round((now - facts.created) / 1000)),
    idle_s: Math.round(idleMs / 1000),
    task_id: ours?.id,
  }
}
