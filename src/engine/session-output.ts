// The session_output use case: a task's kept conversation, or any OpenCode session's, as its last
// answer, its latest entries, or the whole transcript a page at a time (reasoning dropped, outputs
// clipped by opencode/output.ts). The MCP tool translates arguments and renders; what is looked up,
// and every refusal with its next step, is decided here.
import { fail } from "../errors"
import { entriesOf, lastAnswer, page, type Entry } from "../opencode/output"
import { readMessages, sessionDirectory } from "../opencode/session"
import type { Delegations } from "./lifecycle"
import { checkTaskId } from "./terms"

export interface OutputQuery {
  /** A task's kept conversation; exactly one of taskId and sessionId. */
  taskId?: string
  sessionId?: string
  /** The session's directory, when the caller knows it (a task's workspace is used for a task). */
  cwd?: string
  view: "answer" | "events" | "transcript"
  /** events: the latest this many entries. */
  last: number
  /** transcript: where the page starts (from an earlier answer), and its size. */
  cursor?: string
  pageSize: number
  clipBytes: number
}

export interface SessionOutput {
  sessionID: string
  answer?: string
  entries?: Entry[]
  /** Entries in the whole conversation. */
  total?: number
  /** transcript: the cursor of the next page; absent on the last. */
  nextCursor?: string
}

export async function sessionOutput(
  delegations: Pick<Delegations, "read" | "runtime">,
  query: OutputQuery,
): Promise<SessionOutput> {
  if (Boolean(query.taskId) === Boolean(query.sessionId))
    throw fail(
      "Usage",
      "Pass either task_id or session_id.",
      "task_list lists task ids; an OpenCode session id starts with ses_.",
    )
  let sessionID = query.sessionId
  let directory = query.cwd
  if (query.taskId) {
    checkTaskId(query.taskId)
    const record = await delegations.read(query.taskId)
    if (!record) throw fail("Usage", `No task ${query.taskId}.`, "Call task_list for the known tasks.")
    if (!record.sessionID)
      throw fail(
        "Usage",
        `Task ${query.taskId} kept no session (it was removed, or never started).`,
        "Its result (task_result) is all that is left.",
      )
    sessionID = record.sessionID
    directory = record.workspace
  }
  const { client } = await delegations.runtime.opencode()
  directory ??= await sessionDirectory(client, sessionID!)
  const messages = directory ? await readMessages(client, sessionID!, directory) : undefined
  if (!messages)
    throw fail(
      "Usage",
      `OpenCode has no session ${sessionID}${directory ? ` in ${directory}` : ""}.`,
      "Check the id (task_list shows each task's session), and pass cwd if the session is in another directory.",
    )
  if (query.view === "answer") return { sessionID: sessionID!, answer: lastAnswer(messages) }
  const entries = entriesOf(messages, query.clipBytes)
  if (query.view === "events")
    return { sessionID: sessionID!, entries: entries.slice(-query.last), total: entries.length }
  try {
    const shown = page(entries, query.cursor, query.pageSize)
    return { sessionID: sessionID!, entries: shown.entries, total: shown.total, nextCursor: shown.nextCursor }
  } catch (error) {
    // A cursor this tool never returned is a bad argument: say so, with the way back to the first page.
    throw error instanceof RangeError ? fail("Usage", error.message, "Start again without cursor.") : error
  }
}
