// A session's conversation as the parent reads it through session_output: one entry per message
// part that says something (the brief, the answers, each tool call with its target and clipped
// output), reasoning dropped, paged with a cursor. Pure: OpenCode's messages in, entries out.
import type { Message, Part } from "@opencode-ai/sdk/v2"
import { answerText, toolTarget } from "./transcript"

export interface Entry {
  /** Position in the whole conversation, from 0: stable across pages while the session is idle. */
  index: number
  role: "user" | "assistant"
  kind: "text" | "tool" | "error"
  text: string
  /** The tool's name, for a tool entry. */
  tool?: string
  /** True when the text was cut to the clip size. */
  clipped?: boolean
}

export const DEFAULT_CLIP_BYTES = 2000

/** The first `bytes` bytes (whole characters), and whether anything was cut. */
function clip(text: string, bytes: number): { text: string; clipped: boolean } {
  if (Buffer.byteLength(text) <= bytes) return { text, clipped: false }
  let cut = text.slice(0, bytes)
  while (Buffer.byteLength(cut) > bytes) cut = cut.slice(0, -1)
  return { text: `${cut}…`, clipped: true }
}

function partEntry(role: Entry["role"], part: Part, clipBytes: number): Omit<Entry, "index"> | undefined {
  if (part.type === "text" && !part.synthetic && !part.ignored && part.text.trim()) {
    const { text, clipped } = clip(part.text.trim(), clipBytes)
    return { role, kind: "text", text, ...(clipped && { clipped }) }
  }
  if (part.type !== "tool" || part.state.status === "pending") return undefined
  const output =
    part.state.status === "completed"
      ? part.state.output
      : part.state.status === "error"
        ? `error: ${part.state.error}`
        : "(running)"
  const { text, clipped } = clip(`${toolTarget(part)}\n${output}`.trim(), clipBytes)
  return { role, kind: "tool", tool: part.tool, text, ...(clipped && { clipped }) }
}

/** Every entry of the conversation, in order; reasoning, step markers, patches and files are left out. */
export function entriesOf(messages: { info: Message; parts: Part[] }[], clipBytes = DEFAULT_CLIP_BYTES): Entry[] {
  const entries: Entry[] = []
  for (const { info, parts } of messages) {
    for (const part of parts) {
      const entry = partEntry(info.role, part, clipBytes)
      if (entry) entries.push({ index: entries.length, ...entry })
    }
    if (info.role === "assistant" && info.error) {
      const data = info.error.data as { message?: string }
      entries.push({
        index: entries.length,
        role: "assistant",
        kind: "error",
        text: `${info.error.name}: ${data.message ?? ""}`.trim(),
      })
    }
  }
  return entries
}

/** The last assistant answer's text, whole: what a delegation's report is read from. */
export function lastAnswer(messages: { info: Message; parts: Part[] }[]): string {
  for (const { info, parts } of [...messages].reverse()) {
    if (info.role !== "assistant") continue
    const text = answerText(parts)
    if (text) return text
  }
  return ""
}

export interface Page {
  entries: Entry[]
  total: number
  /** Pass it back as `cursor` for the next page; absent on the last one. */
  nextCursor?: string
}

/** `limit` entries from `cursor` (an entry index, as a string; the start when absent). */
export function page(entries: Entry[], cursor: string | undefined, limit: number): Page {
  const start = cursor === undefined ? 0 : Number(cursor)
  if (!Number.isInteger(start) || start < 0)
    throw new RangeError(`cursor "${cursor}" is not one session_output returned`)
  const slice = entries.slice(start, start + limit)
  const end = start + slice.length
  return { entries: slice, total: entries.length, ...(end < entries.length && { nextCursor: String(end) }) }
}

/** The entries as text: one block per entry, headed by its index, role and tool. */
export function renderEntries(entries: Entry[]): string {
  return entries
    .map(
      (entry) =>
        `[${entry.index}] ${entry.role}${entry.tool ? ` ${entry.tool}` : entry.kind === "error" ? " error" : ""}: ` +
        `${entry.text}`,
    )
    .join("\n\n")
}
