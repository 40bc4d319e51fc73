// Whether a task's session still works on the shared server, asked without starting a server or
// following its events: the machine-wide slots (engine/capacity/slots.ts) count sessions, not processes, so a
// slot outlives a SIGKILLed owner for as long as the session it was taken for runs.
import type { Paths } from "../config/paths"
import { fail } from "../errors"
import { probeServer, readServerRecord } from "./server"

/**
 * True while a session titled with `taskID` in `workspace` is busy or retrying; rejects when
 * OpenCode cannot say.
 */
export async function taskSessionBusy(paths: Paths, taskID: string, workspace: string): Promise<boolean> {
  const record = await readServerRecord(paths)
  if (!record) return false
  const state = await probeServer(record)
  // The sessions went with the server: its process is gone, or another program answers on its port now.
  if (state === "gone" || state === "foreign") return false
  if (state === "slow") return true
  const { connect } = await import("./client")
  const client = connect(record, { standIns: paths.opencodeDirsDir })
  const listed = await client.session.list({ directory: workspace, search: taskID })
  const status = await client.session.status({ directory: workspace })
  if (!listed.data || !status.data)
    throw fail("Server", `OpenCode did not list the sessions of ${taskID} in ${workspace}.`)
  const states = status.data as Record<string, { type: string }>
  return listed.data.some(
    (session) => session.title.includes(taskID) && (states[session.id]?.type ?? "idle") !== "idle",
  )
}
