import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { parseInteger } from "../config/integer"
import { resolvePaths } from "../config/paths"
import {
  fail,
  parseSince,
  DEFAULT_SESSION_ROWS,
  DEFAULT_STALE_S,
  renderListing,
  sessionsOnServer,
  SESSION_STATES,
  type SessionState,
  TaskStore,
} from "../engine"

export default defineCommand({
  meta: {
    name: "sessions",
    description:
      "The sessions on the shared OpenCode server, ours and others': state, age, tokens, cost and last tool.",
  },
  args: {
    ours: { type: "boolean", default: false, description: "Only our tasks' sessions." },
    directory: { type: "string", description: "Only sessions started in this directory." },
    state: { type: "string", description: "Only sessions in this state: busy, idle or stale." },
    since: {
      type: "string",
      description: "Only sessions active in this period: 30m, 24h, 7d, or a date such as 2026-11-01.",
    },
    "stale-seconds": {
      type: "string",
      default: String(DEFAULT_STALE_S),
      description: "A busy session with no event for this long is stale.",
    },
    limit: { type: "string", default: String(DEFAULT_SESSION_ROWS), description: "At most this many, newest first." },
    json: { type: "boolean", default: false, description: "Print the rows as JSON." },
  },
  async run({ args }) {
    if (args.state !== undefined && !SESSION_STATES.includes(args.state as SessionState))
      throw fail(
        "Usage",
        `--state must be busy, idle or stale, got "${args.state.slice(0, 40)}".`,
        "Leave it out to list every state.",
      )
    const filter = {
      scope: args.ours ? ("ours" as const) : ("all" as const),
      directory: args.directory,
      state: args.state as SessionState | undefined,
      since: args.since ? parseSince(args.since, Date.now()) : undefined,
      staleMs:
        (parseInteger("--stale-seconds", args["stale-seconds"], { min: 30, max: 86_400 }) ?? DEFAULT_STALE_S) * 1000,
      limit: parseInteger("--limit", args.limit, { min: 1, max: 200 }) ?? DEFAULT_SESSION_ROWS,
    }
    const paths = resolvePaths(flagsFromProcess())
    const listing = await sessionsOnServer(paths, () => new TaskStore(paths.tasksDir).list(), filter)
    if (!args.json) return console.log(renderListing(listing))
    const { rows: sessions, total } = listing
    console.log(JSON.stringify({ sessions, total, ...(!listing.serving && { server: "not running" }) }, null, 2))
  },
})
