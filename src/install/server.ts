// OpenCode reads agents and plugins when an instance starts, so a shared server started before an
// install or uninstall would go on with the old ones. It is stopped (the next delegation starts a
// fresh one) unless a delegation still runs on it, which would lose its session.
import type { Paths } from "../config/paths"
import { isFinished } from "../engine/records"
import { TaskStore } from "../engine/store"
import { readServerRecord, stopServer } from "../opencode/server"
import { alive } from "../util/process"

export type Retired = "none" | "stopped" | "busy"

export async function retireSharedServer(paths: Paths): Promise<Retired> {
  const record = await readServerRecord(paths)
  if (!record || !alive(record.pid)) return "none"
  const running = (await new TaskStore(paths.tasksDir).list()).filter(
    (task) => !isFinished(task.status) && alive(task.ownerPid),
  )
  if (running.length) return "busy"
  await stopServer(paths)
  return "stopped"
}

export function describeRetired(outcome: Retired, after: "install" | "uninstall"): string | undefined {
  if (outcome === "stopped")
    return after === "install"
      ? "Stopped the shared OpenCode server; the next delegation starts it with the new agents and plugin."
      : "Stopped the shared OpenCode server."
  if (outcome === "busy")
    return after === "install"
      ? "The shared OpenCode server is still running delegations; it picks up the new agents and plugin once they " +
          "end and the last MCP client exits."
      : "The shared OpenCode server is still running delegations; it stops when the last MCP client exits."
  return undefined
}
