import { z } from "zod"
import type { Entry } from "../../engine"
import { checkTaskId, fail, DEFAULT_CLIP_BYTES } from "../../engine/terms"
import { defineTool, type Engine } from "../define"
import description from "./session_output.md" with { type: "text" }

const entryShape = z.object({
  index: z.number(),
  role: z.enum(["user", "assistant"]),
  kind: z.enum(["text", "tool", "error"]),
  text: z.string(),
  tool: z.string().optional(),
  clipped: z.boolean().optional(),
})

export const sessionOutput = defineTool({
  name: "session_output",
  title: "Session output",
  description,
  input: {
    task_id: z.string().min(1).optional().describe("A task's kept conversation."),
    session_id: z.string().min(1).optional(),
    cwd: z.string().min(1).optional(),
    view: z.enum(["answer", "events", "transcript"]).default("answer"),
    last: z.number().int().min(1).max(200).default(20),
    cursor: z.string().optional(),
    page_size: z.number().int().min(1).max(200).default(50),
    clip_bytes: z.number().int().min(100).max(20_000).default(DEFAULT_CLIP_BYTES),
  },
  output: {
    session_id: z.string(),
    answer: z.string().optional(),
    entries: z.array(entryShape).optional(),
    total: z.number().optional().describe("Entries in the whole conversation."),
    next_cursor: z.string().optional().describe("transcript: pass it as cursor for the next page; absent on the last."),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { delegations, engine }) => {
    if (Boolean(args.task_id) === Boolean(args.session_id))
      throw fail(
        "Usage",
        "Pass either task_id or session_id.",
        "task_list lists task ids; an OpenCode session id starts with ses_.",
      )
    let sessionID = args.session_id
    let directory = args.cwd
    if (args.task_id) {
      checkTaskId(args.task_id)
      const record = await delegations.read(args.task_id)
      if (!record) throw fail("Usage", `No task ${args.task_id}.`, "Call task_list for the known tasks.")
      if (!record.sessionID)
        throw fail(
          "Usage",
          `Task ${args.task_id} kept no session (it was removed, or never started).`,
          "Its result (task_result) is all that is left.",
        )
      sessionID = record.sessionID
      directory = record.workspace
    }
    const { client } = await delegations.runtime.opencode()
    directory ??= await engine.sessionDirectory(client, sessionID!)
    const messages = directory ? await engine.readMessages(client, sessionID!, directory) : undefined
    if (!messages)
      throw fail(
        "Usage",
        `OpenCode has no session ${sessionID}${directory ? ` in ${directory}` : ""}.`,
        "Check the id (task_list shows each task's session), and pass cwd if the session is in another directory.",
      )
    if (args.view === "answer") {
      const answer = engine.lastAnswer(messages)
      return { text: answer || "(no answer yet)", structured: { session_id: sessionID!, answer } }
    }
    const entries = engine.entriesOf(messages, args.clip_bytes)
    const shown =
      args.view === "events"
        ? { entries: entries.slice(-args.last), total: entries.length }
        : pageOf(engine, entries, args.cursor, args.page_size)
    const more =
      "nextCursor" in shown && shown.nextCursor ? `\n\n(more: call again with cursor "${shown.nextCursor}")` : ""
    return {
      text: `${engine.renderEntries(shown.entries) || "(no entries)"}${more}`,
      structured: {
        session_id: sessionID!,
        entries: shown.entries,
        total: shown.total,
        next_cursor: "nextCursor" in shown ? shown.nextCursor : undefined,
      },
    }
  },
})

/** A cursor this tool never returned is a bad argument: say so, with the way back to the first page. */
function pageOf(engine: Engine, entries: Entry[], cursor: string | undefined, size: number) {
  try {
    return engine.page(entries, cursor, size)
  } catch (error) {
    throw error instanceof RangeError ? fail("Usage", error.message, "Start again without cursor.") : error
  }
}
