import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { resolvePaths } from "../config/paths"
import { TaskStore } from "../engine/tasks"

export default defineCommand({
  meta: { name: "tasks", description: "List delegated tasks recorded on disk, newest first." },
  args: {
    limit: { type: "string", default: "20", description: "At most this many." },
    json: { type: "boolean", default: false, description: "Print the records as JSON." },
  },
  async run({ args }) {
    const paths = resolvePaths(flagsFromProcess())
    const { records } = await new TaskStore(paths.tasksDir).page({ limit: Number(args.limit) || 20 })
    if (args.json) return console.log(JSON.stringify(records, null, 2))
    if (!records.length) return console.log(`No tasks in ${paths.tasksDir}.`)
    for (const r of records)
      console.log(
        `${r.id}  ${r.status.padEnd(12)} ${r.role.padEnd(7)} ${r.workspace}${r.sessionID ? `  ${r.sessionID}` : ""}`,
      )
  },
})
