// Restarts the shared server once it rests with its memory grown past `serverRecycleMb`. Releasing an
// instance gives back its threads and file descriptors at once but only part of its memory (README
// "Performance": a server that served 50 directories, each released, still holds about 1.7x what it held
// after one), so memory would follow history. A server nobody uses is stopped instead, and the next
// delegation starts a fresh one, as after any server that went away (server.ts). Rested means no turn of
// any process marked in use (instance-marks.ts), no unfinished task in the shared store (a task settling
// or waiting for an answer), and no session on the server updated within the rest window; all are
// checked, and the server stopped, under a whole-server release mark that every turn starting meanwhile
// waits for.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { lastSessionUpdate } from "../../opencode/instances"
import type { ServerRecord, StopStep } from "../../opencode/server"
import { footprint, settledFootprint } from "../../util/footprint"
import type { InstanceMarks } from "./instance-marks"

export interface RecycleLimits {
  /** Resident MB of the server (its process and descendants) above which a rested one is restarted; 0 never. */
  recycleMb: number
  /** No session updated for this long, on top of no turn running. */
  restMs: number
}

export interface RecycleDeps {
  /** The server this process is connected to, if any: recycling never starts one. */
  connection: () => { record: ServerRecord; client: OpencodeClient } | undefined
  limits: () => Promise<RecycleLimits>
  marks: InstanceMarks
  /** True when no task of any process is unfinished. */
  tasksRest: () => Promise<boolean>
  /** Stops the server if it is still the recorded one (server.ts `stopServerIfRecorded`, given `step`). */
  stop: (record: ServerRecord, step?: (step: StopStep) => Promise<void>) => Promise<boolean>
  /**
   * Called after each step of a restart (the release marked, the rest confirmed, then the stop's own
   * steps): every one is a point where a SIGKILL must leave what the next process recovers from.
   */
  step?: (step: RecycleStep) => Promise<void>
}

/** The steps of a restart, in order. */
export const RECYCLE_STEPS = ["releasing", "rested", "locked", "marked", "signalled", "stopped", "forgotten"] as const
export type RecycleStep = (typeof RECYCLE_STEPS)[number]

export type RecycleOutcome = "recycled" | "small" | "busy" | "off"

/** Restarts the connected server if it rests and has outgrown the limit; says why not otherwise. */
export async function recycleIfRested(deps: RecycleDeps): Promise<RecycleOutcome> {
  const connection = deps.connection()
  const { recycleMb, restMs } = await deps.limits()
  if (!connection || recycleMb === 0) return "off"
  // A server just used holds garbage its collector has not returned yet (a reading right after a scout
  // can be twice its settled size): only the smallest of three readings a second apart counts.
  if ((await footprint(connection.record.pid)).rssMb <= recycleMb) return "small"
  if ((await settledFootprint(connection.record.pid)).rssMb <= recycleMb) return "small"
  const step = deps.step ?? (async () => undefined)
  const stopped = await deps.marks.releasingServer(async () => {
    await step("releasing")
    if (!(await deps.tasksRest())) return false
    const updated = await lastSessionUpdate(connection.client)
    if (updated !== undefined && Date.now() - updated < restMs) return false
    await step("rested")
    return deps.stop(connection.record, step)
  })
  return stopped ? "recycled" : "busy"
}
