// `watch <task_id|session_id>`: OpenCode's own terminal UI attached to the shared server on that session.
// It never starts a server (with none running there is nothing to watch) and never shows the password.
import { defineCommand } from "citty"
import { flagsFromProcess } from "../config/flags"
import { resolvePaths } from "../config/paths"
import {
  attachCommand,
  noServer,
  noTerminal,
  parseWatchId,
  probeServer,
  provideStandIn,
  readServerRecord,
  sessionGone,
  TaskStore,
  taskSession,
} from "../engine"
import { interactive } from "../util/process"

export default defineCommand({
  meta: {
    name: "watch",
    description: "Open OpenCode's terminal UI on a delegated task's session, live (needs the shared server running).",
  },
  args: {
    id: { type: "positional", required: true, description: "A task_id (task_…) or an OpenCode session id (ses_…)." },
  },
  async run({ args }) {
    const target = parseWatchId(args.id)
    const flags = flagsFromProcess()
    const paths = resolvePaths(flags)
    const sessionID =
      target.kind === "task"
        ? taskSession(target.taskID, await new TaskStore(paths.tasksDir).read(target.taskID))
        : target.sessionID
    const server = await readServerRecord(paths)
    if (!server || (await probeServer(server)) !== "healthy") throw noServer()
    const { connect } = await import("../opencode/client")
    const { sessionDirectory } = await import("../opencode/session")
    const standIns = paths.opencodeDirsDir
    const directory = await sessionDirectory(connect(server, { standIns }), sessionID)
    if (!directory) throw sessionGone(sessionID)
    // The UI names, and runs in, the stand-in: never the workspace (a session of an older release names it),
    // where an agent may have planted plugin code the UI, or the server loading an instance, would import.
    const standIn = provideStandIn(standIns, directory)
    const command = attachCommand(server, sessionID, standIn, flags.env)
    if (!process.stdin.isTTY || !process.stdout.isTTY) throw noTerminal(sessionID)
    process.exitCode = await interactive(command.argv, { env: command.env, cwd: standIn })
  },
})
