import { z } from "zod"
import { DEFAULT_SESSION_ROWS, DEFAULT_STALE_S, SESSION_STATES } from "../../engine/terms"
import { defineTool } from "../define"
import description from "./sessions.md" with { type: "text" }

const rowShape = z.object({
  session_id: z.string(),
  title: z.string(),
  directory: z.string(),
  agent: z.string().optional(),
  model: z.string().optional().describe("provider/model of the session's latest turn."),
  state: z.enum(SESSION_STATES),
  age_s: z.number(),
  idle_s: z.number().describe("Seconds since the session's latest known event."),
  tokens_in: z.number().describe("Input tokens, cache reads and writes included."),
  tokens_out: z.number().describe("Output tokens, reasoning included."),
  cost: z.number().describe("At OpenCode's model prices."),
  last_tool: z.string().optional().describe("The latest tool call and its target."),
  task_id: z.string().optional().describe("Ours: the task this session belongs to."),
})

export const sessions = defineTool({
  name: "sessions",
  title: "Sessions",
  description,
  input: {
    scope: z.enum(["all", "ours"]).default("all"),
    directory: z.string().min(1).optional(),
    state: z.enum(SESSION_STATES).optional(),
    since: z.string().min(1).max(40).optional().describe("30m, 24h, 7d or a date."),
    stale_seconds: z.number().int().min(30).max(86_400).default(DEFAULT_STALE_S),
    limit: z.number().int().min(1).max(200).default(DEFAULT_SESSION_ROWS),
  },
  output: {
    sessions: z.array(rowShape),
    total: z.number().describe("Sessions that matched, before the limit."),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { delegations, engine }) => {
    const since = args.since ? engine.parseSince(args.since, Date.now()) : undefined
    const filter = {
      scope: args.scope,
      directory: args.directory,
      state: args.state,
      since,
      staleMs: args.stale_seconds * 1000,
      limit: args.limit,
    }
    const listing = await engine.sessionsOnServer(delegations.runtime.paths, () => delegations.list(), filter)
    return { text: engine.renderListing(listing), structured: { sessions: listing.rows, total: listing.total } }
  },
})
