import { z } from "zod"
import { DEFAULT_CLIP_BYTES } from "../../engine/terms"
import { defineTool } from "../define"
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
    const shown = await engine.sessionOutput(delegations, {
      taskId: args.task_id,
      sessionId: args.session_id,
      cwd: args.cwd,
      view: args.view,
      last: args.last,
      cursor: args.cursor,
      pageSize: args.page_size,
      clipBytes: args.clip_bytes,
    })
    if (args.view === "answer")
      return {
        text: shown.answer || "(no answer yet)",
        structured: { session_id: shown.sessionID, answer: shown.answer },
      }
    const more = shown.nextCursor ? `\n\n(more: call again with cursor "${shown.nextCursor}")` : ""
    return {
      text: `${engine.renderEntries(shown.entries ?? []) || "(no entries)"}${more}`,
      structured: {
        session_id: shown.sessionID,
        entries: shown.entries,
        total: shown.total,
        next_cursor: shown.nextCursor,
      },
    }
  },
})
