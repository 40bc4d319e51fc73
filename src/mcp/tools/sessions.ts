import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { DEFAULT_STALE_S, SESSION_STATES, sessionRow, type OurTask } from "../../engine/sessions"
import { isFinished } from "../../engine/tasks"
import { latestMessage, listAllSessions } from "../../opencode/session"
import { errorResult } from "../shared"
import description from "./sessions.md" with { type: "text" }

/** Sessions asked of OpenCode in one call; each listed one costs a read of its latest message. */
const LISTED_MAX = 500

const rowShape = z.object({
  session_id: z.string(),
  title: z.string(),
  directory: z.string(),
  agent: z.string().optional(),
  state: z.enum(SESSION_STATES),
  age_s: z.number(),
  idle_s: z.number().describe("Seconds since the session's latest known event."),
  task_id: z.string().optional().describe("Ours: the task this session belongs to."),
})

export function registerSessions(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "sessions",
    {
      title: "Sessions",
      description,
      inputSchema: {
        scope: z.enum(["all", "ours"]).default("all").describe("all (default): every session on the shared server; ours: only our tasks' sessions."),
        directory: z.string().min(1).optional().describe("Only sessions started in this directory."),
        state: z.enum(SESSION_STATES).optional().describe("Only sessions in this state."),
        stale_seconds: z.number().int().min(30).max(86_400).default(DEFAULT_STALE_S).describe("A busy session with no event for this long is stale."),
        limit: z.number().int().min(1).max(200).default(50).describe("At most this many sessions, newest first."),
      },
      outputSchema: { sessions: z.array(rowShape), total: z.number().describe("Sessions that matched, before the limit.") },
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        const ours = new Map<string, OurTask>()
        for (const record of await delegations.list())
          for (const id of new Set([...record.sessions, ...(record.sessionID ? [record.sessionID] : [])]))
            ours.set(id, { id: record.id, activity: isFinished(record.status) ? undefined : record.activity })
        const { client } = await delegations.runtime.opencode()
        const listed = (await listAllSessions(client, LISTED_MAX))
          .filter((session) => !args.directory || session.directory === args.directory)
          .filter((session) => args.scope === "all" || ours.has(session.id))
          .sort((a, b) => b.time.created - a.time.created)
        const now = Date.now()
        const rows = await Promise.all(
          listed.map(async (session) => {
            const latest = await latestMessage(client, session.id)
            const facts = {
              id: session.id,
              title: session.title,
              directory: session.directory,
              agent: session.agent,
              created: session.time.created,
              updated: session.time.updated,
              latest: latest && { role: latest.role, created: latest.time.created, completed: "completed" in latest.time ? latest.time.completed : undefined },
            }
            return sessionRow(facts, now, args.stale_seconds * 1000, ours.get(session.id))
          }),
        )
        const matched = rows.filter((row) => !args.state || row.state === args.state)
        const shown = matched.slice(0, args.limit)
        const lines = shown.map((row) => `${row.session_id} · ${row.state} · ${row.age_s}s old, ${row.idle_s}s quiet · ${row.directory} · ${row.title}${row.task_id ? ` (ours: ${row.task_id})` : ""}`)
        return {
          content: [{ type: "text", text: `${lines.join("\n") || "(no sessions)"}${matched.length > shown.length ? `\n(${matched.length - shown.length} more: raise limit or filter)` : ""}` }],
          structuredContent: { sessions: shown, total: matched.length },
        }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
