import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { parseInteger } from "../config/integer"
import { resolvePaths } from "../config/paths"
import { LIST_LIMIT, storedTasks } from "../engine"

export default defineCommand({
  meta: { name: "tasks", description: "List delegated tasks recorded on disk, newest first." },
  args: {
    limit: {
      type: "string",
      default: String(LIST_LIMIT.fallback),
      description: `At most this many, from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}.`,
    },
    json: { type: "boolean", default: false, description: "Print the records as JSON." },
  },
  async run({ args }) {
    // Refused before anything is read: a negative, zero or non-numeric limit is a mistake, not "all" or 20.
    const limit = parseInteger("--limit", args.limit, LIST_LIMIT) ?? LIST_LIMIT.fallback
    const paths = resolvePaths(flagsFromProcess())
    const { tasks } = await storedTasks(paths.tasksDir, { limit })
    if (args.json) return console.log(JSON.stringify(tasks, null, 2))
    if (!tasks.length) return console.log(`No tasks in ${paths.tasksDir}.`)
    for (const r of tasks)
      console.log(
        `${r.id}  ${r.status.padEnd(12)} ${r.role.padEnd(7)} ${r.workspace}${r.sessionID ? `  ${r.sessionID}` : ""}`,
      )
  },
})
