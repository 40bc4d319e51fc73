// Reads an OpenAI chat-completions request the way the scripted model needs it: which script, which
// user turn, which step, and what the tools returned. Pure: a request body in, data out.
import { z } from "zod"

const Part = z.looseObject({ type: z.string(), text: z.string().optional() })

const MessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(Part), z.null()]).optional(),
  tool_calls: z
    .array(z.looseObject({ id: z.string(), function: z.looseObject({ name: z.string(), arguments: z.string() }) }))
    .optional(),
  tool_call_id: z.string().optional(),
  /** Reasoning an OpenAI-compatible client replays on an assistant message. */
  reasoning_content: z.string().optional(),
})

export const ChatRequestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(MessageSchema),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional(),
  tools: z.array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }) })).optional(),
  tool_choice: z.unknown().optional(),
})

export type Message = z.infer<typeof MessageSchema>
export type ChatRequest = z.infer<typeof ChatRequestSchema>

/** What a tool returned, as OpenCode reported it back in a `role: "tool"` message. */
export interface ToolResult {
  callId: string
  /** The tool's name, from the assistant message that made the call. */
  tool: string
  args: string
  output: string
}

const MARKER = /\[script:([\w.-]+)\]/
const MAX_STEPS = /MAXIMUM STEPS REACHED/i

export function textOf(message: Message): string {
  const content = message.content
  if (typeof content === "string") return content
  if (!content) return ""
  return content.map((part) => part.text ?? "").join("")
}

/** OpenCode's title generator: a request offering no tools whose system prompt asks for a title. */
export function isTitleRequest(request: ChatRequest): boolean {
  if (request.tools && request.tools.length > 0) return false
  const system = request.messages
    .filter((m) => m.role === "system")
    .map(textOf)
    .join("\n")
  return (
    /title generator|generate a title/i.test(system) ||
    request.messages.some((m) => /^Generate a title/i.test(textOf(m)))
  )
}

/** The first `[script:NAME]` marker in the system prompt or a user message. */
export function scriptMarker(request: ChatRequest): string | undefined {
  for (const message of request.messages) {
    if (message.role !== "system" && message.role !== "user") continue
    const found = MARKER.exec(textOf(message))
    if (found) return found[1]
  }
  return undefined
}

/** The user messages that open turns: runs of consecutive user messages count once. */
function turnStarts(messages: Message[]): number[] {
  const starts: number[] = []
  messages.forEach((message, index) => {
    if (message.role !== "user") return
    if (index > 0 && messages[index - 1]?.role === "user") return
    if (MAX_STEPS.test(textOf(message))) return
    starts.push(index)
  })
  return starts
}

/**
 * An assistant message that answered a step. A stream cut mid-answer leaves an empty assistant
 * message in OpenCode's history beside the retried one; it does not count.
 */
function isAnsweredStep(message: Message): boolean {
  if (message.role !== "assistant") return false
  if (message.tool_calls && message.tool_calls.length > 0) return true
  const text = textOf(message)
  return text.trim() !== "" && !MAX_STEPS.test(text)
}

export interface Position {
  /** Zero-based user turn. */
  turn: number
  /** Zero-based step within the turn: assistant messages already answered after the user's message. */
  step: number
  /** OpenCode asked for text only (the agent's last allowed step). */
  maxSteps: boolean
}

export function positionOf(request: ChatRequest): Position {
  const messages = request.messages
  const starts = turnStarts(messages)
  const last = starts.at(-1) ?? -1
  const after = messages.slice(last + 1)
  const step = after.filter(isAnsweredStep).length
  const maxSteps = after.some((m) => MAX_STEPS.test(textOf(m)))
  return { turn: Math.max(0, starts.length - 1), step, maxSteps }
}

/** Every tool result in the conversation, in order, with the name of the tool that produced it. */
export function toolResultsOf(messages: Message[]): ToolResult[] {
  const calls = new Map<string, { name: string; arguments: string }>()
  const results: ToolResult[] = []
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) calls.set(call.id, call.function)
    if (message.role !== "tool" || !message.tool_call_id) continue
    const call = calls.get(message.tool_call_id)
    results.push({
      callId: message.tool_call_id,
      tool: call?.name ?? "",
      args: call?.arguments ?? "",
      output: textOf(message),
    })
  }
  return results
}

/** Values for a text step's {{placeholders}}. */
export function templateValues(request: ChatRequest): Record<string, string> {
  const messages = request.messages
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant" && (m.tool_calls?.length ?? 0) > 0)
  const start = turnStarts(messages).at(-1) ?? 0
  const outputs = (from: number) => toolResultsOf(messages.slice(from)).map((r) => r.output)
  const lastToolOutput = lastAssistant < start ? "" : outputs(lastAssistant).join("\n\n")
  return {
    lastToolOutput,
    // The task a delegating call named, for a parent script that follows it (task_status with its id).
    lastTaskId: /\btask_[a-z0-9]+_[0-9a-f]+\b/.exec(lastToolOutput)?.[0] ?? "",
    toolOutputs: outputs(start).join("\n\n"),
    userMessage: textOf(messages[start] ?? { role: "user" }),
  }
}

/** A tool call's arguments with {{placeholders}} filled in each string value (the JSON stays well formed). */
export function fillArguments(value: unknown, values: Record<string, string>): unknown {
  if (typeof value === "string") return value.includes("{{") ? fillTemplate(value, values) : value
  if (Array.isArray(value)) return value.map((item) => fillArguments(item, values))
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillArguments(item, values)]))
  return value
}

export function fillTemplate(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) => values[name] ?? whole)
}
