// What the `sessions` tool and CLI say of each session on the shared server, ours or anyone's: its
// state and age, decided from what OpenCode keeps (the session's times, tokens, cost, its latest
// messages) and, for our own tasks, the record's liveness. `sessionRow` decides (pure); `listSessions`
// reads OpenCode's whole list a page at a time (the total is true, however many there are), then the
// latest messages of each row shown only (its state and last tool) — of each candidate only when the
// state is filtered on, since the list itself does not say which sessions are busy.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import type { Paths } from "../config/paths"
import { probeServer, readServerRecord } from "../opencode/server"
import { latestMessage, listAllSessions, recentMessages } from "../opencode/session"
import { toolTarget } from "../opencode/transcript"
import { hostFs, shownDirectory } from "../sandbox"
import { type Activity, isFinished, type TaskRecord } from "./records"
import type { SessionState } from "./terms"

/** Latest-message reads in flight at once when every candidate's state is needed (a state filter). */
const READ_CONCURRENCY = 16

/** Messages read back, per row shown, to find its last tool call. */
const RECENT_FOR_TOOL = 6

export interface SessionFacts {
  id: string
  title: string
  directory: string
  agent?: string
  /** provider/model of the session's latest turn. */
  model?: string
  /** Epoch ms, as OpenCode keeps them. */
  created: number
  updated: number
  /** The latest message: an assistant message not yet completed, or a user message not yet answered, means busy. */
  latest?: { role: "user" | "assistant"; created: number; completed?: number }
  /** The session's totals as OpenCode keeps them. */
  tokens?: { input: number; output: number; reasoning: number; cache: { read: number; write: number } }
  cost?: number
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
  model?: string
  state: SessionState
  /** Seconds since the session was created. */
  age_s: number
  /** Seconds since its latest event as far as it is known (an update, a message, our task's liveness). */
  idle_s: number
  /** Input tokens with cache reads and writes, output with reasoning (as `stats` counts them). */
  tokens_in: number
  tokens_out: number
  cost: number
  /** The latest tool call and what it worked on ("read src/app.ts"). */
  last_tool?: string
  /** Ours: the task it belongs to. */
  task_id?: string
}

export function sessionRow(facts: SessionFacts, now: number, staleMs: number, ours?: OurTask): SessionRow {
  const latest = facts.latest
  const busy = latest !== undefined && (latest.role === "user" || latest.completed === undefined)
  const lastEvent = Math.max(
    facts.updated,
    latest?.completed ?? latest?.created ?? 0,
    ours?.activity ? Date.parse(ours.activity.at) : 0,
  )
  const idleMs = Math.max(0, now - lastEvent)
  const tokens = facts.tokens
  return {
    session_id: facts.id,
    title: facts.title,
    directory: facts.directory,
    agent: facts.agent,
    model: facts.model,
    state: busy ? (idleMs > staleMs ? "stale" : "busy") : "idle",
    age_s: Math.max(0, Math.round((now - facts.created) / 1000)),
    idle_s: Math.round(idleMs / 1000),
    tokens_in: tokens ? tokens.input + tokens.cache.read + tokens.cache.write : 0,
    tokens_out: tokens ? tokens.output + tokens.reasoning : 0,
    cost: facts.cost ?? 0,
    task_id: ours?.id,
  }
}

export interface SessionFilter {
  /** all: every session on the server; ours: only our tasks' sessions. */
  scope: "all" | "ours"
  directory?: string
  /** paths.opencodeDirsDir: OpenCode names each session's directory by its stand-in, shown as its workspace. */
  standIns?: string
  state?: SessionState
  /** Epoch ms: only sessions active (updated) at or after it. */
  since?: number
  staleMs: number
  limit: number
}

type Listed = Awaited<ReturnType<typeof listAllSessions>>[number]
type Messages = Awaited<ReturnType<typeof recentMessages>>

/** The sessions that match, newest first, at most `limit` of them, and how many matched in all. */
export async function listSessions(
  client: OpencodeClient,
  records: TaskRecord[],
  filter: SessionFilter,
  now = Date.now(),
): Promise<{ rows: SessionRow[]; total: number }> {
  const ours = new Map<string, OurTask>()
  for (const record of records)
    for (const id of new Set([...record.sessions, ...(record.sessionID ? [record.sessionID] : [])]))
      ours.set(id, { id: record.id, activity: isFinished(record.status) ? undefined : record.activity })
  const listed = (await listAllSessions(client))
    .map((session) =>
      filter.standIns ? { ...session, directory: shownDirectory(filter.standIns, session.directory, hostFs) } : session,
    )
    .filter((session) => !filter.directory || session.directory === filter.directory)
    .filter((session) => filter.scope === "all" || ours.has(session.id))
    .filter((session) => filter.since === undefined || session.time.updated >= filter.since)
    .sort((a, b) => b.time.created - a.time.created)
  // One read per row: its newest messages give both its state and its last tool.
  const rowOf = async (session: Listed) => {
    const messages = await recentMessages(client, session.id, RECENT_FOR_TOOL)
    const row = sessionRow(factsOf(session, messages?.at(-1)?.info), now, filter.staleMs, ours.get(session.id))
    row.last_tool = lastTool(messages)
    return row
  }
  if (!filter.state) return { rows: await Promise.all(listed.slice(0, filter.limit).map(rowOf)), total: listed.length }
  // Each candidate's state from its latest message alone; the rows shown are then read as above.
  const matched: Listed[] = []
  for (let at = 0; at < listed.length; at += READ_CONCURRENCY) {
    const batch = listed.slice(at, at + READ_CONCURRENCY)
    const latest = await Promise.all(batch.map((session) => latestMessage(client, session.id)))
    for (const [i, session] of batch.entries())
      if (sessionRow(factsOf(session, latest[i]), now, filter.staleMs, ours.get(session.id)).state === filter.state)
        matched.push(session)
  }
  const rows = await Promise.all(matched.slice(0, filter.limit).map(rowOf))
  // A session that changed state between the two reads is shown as it is now.
  return { rows, total: matched.length }
}

type Latest = NonNullable<Messages>[number]["info"]

function factsOf(session: Listed, latest: Latest | undefined): SessionFacts {
  return {
    id: session.id,
    title: session.title,
    directory: session.directory,
    agent: session.agent,
    model: session.model && `${session.model.providerID}/${session.model.id}`,
    created: session.time.created,
    updated: session.time.updated,
    latest: latest && {
      role: latest.role,
      created: latest.time.created,
      completed: "completed" in latest.time ? latest.time.completed : undefined,
    },
    tokens: session.tokens,
    cost: session.cost,
  }
}

/** The newest tool call in these messages, as "tool target". */
function lastTool(messages: Messages): string | undefined {
  for (const message of [...(messages ?? [])].reverse())
    for (const part of [...message.parts].reverse())
      if (part.type === "tool") return `${part.tool} ${toolTarget(part)}`.trim()
  return undefined
}

export interface SessionListing {
  rows: SessionRow[]
  total: number
  /** False when no healthy shared server runs: then nothing is listed, and none was started. */
  serving: boolean
}

/**
 * The sessions on the shared server, one rule for the tool and the CLI: listing is a read, so with no
 * healthy server running none is started (no delegated session can be busy then; a server is hundreds
 * of MB) and the listing says so.
 */
export async function sessionsOnServer(
  paths: Paths,
  records: () => Promise<TaskRecord[]>,
  filter: SessionFilter,
): Promise<SessionListing> {
  const server = await readServerRecord(paths)
  if (!server || (await probeServer(server)) !== "healthy") return { rows: [], total: 0, serving: false }
  // Loaded with the first listing: the CLI's start stays free of the OpenCode client.
  const { connect } = await import("../opencode/client")
  // OpenCode knows each workspace by its stand-in: the client and the rows translate both ways.
  const standIns = paths.opencodeDirsDir
  const client = connect(server, { standIns })
  return { ...(await listSessions(client, await records(), { ...filter, standIns })), serving: true }
}

/** One line per row, for the tool's text and the CLI; says so when no server runs. */
export function renderListing(listing: SessionListing): string {
  if (!listing.serving) return "The shared OpenCode server is not running: no delegated session to list."
  return renderSessions(listing.rows, listing.total)
}

/** One line per row, for the tool's text and the CLI. */
function renderSessions(rows: SessionRow[], total: number): string {
  const lines = rows.map((row) => {
    const spent = `${row.tokens_in} in / ${row.tokens_out} out, $${row.cost.toFixed(4)}`
    return (
      `${row.session_id} · ${row.state} · ${row.age_s}s old, ${row.idle_s}s quiet · ` +
      `${spent}${row.last_tool ? ` · last: ${row.last_tool}` : ""} · ${row.directory} · ` +
      `${row.title}${row.task_id ? ` (ours: ${row.task_id})` : ""}`
    )
  })
  const more = total > rows.length ? `\n(${total - rows.length} more: raise limit or filter)` : ""
  return `${lines.join("\n") || "(no sessions)"}${more}`
}
