import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { resolvePaths } from "../config/paths"
import { parseSince, renderStats, TaskStore } from "../engine"

export default defineCommand({
  meta: {
    name: "stats",
    description:
      "The savings ledger: tasks, success rate, tokens, cost, bytes kept out and median duration per role and model.",
  },
  args: {
    since: {
      type: "string",
      description: "Only tasks finished in this period: 24h, 7d, 2w, or a date such as 2026-11-01.",
    },
    json: { type: "boolean", default: false, description: "Print the ledger as JSON." },
  },
  async run({ args }) {
    const paths = resolvePaths(flagsFromProcess())
    const stats = await new TaskStore(paths.tasksDir).stats(args.since ? parseSince(args.since, Date.now()) : undefined)
    console.log(args.json ? JSON.stringify(stats, null, 2) : renderStats(stats))
  },
})
