// The Anthropic Messages API face of the scripted model (`POST /v1/messages`), so Claude Code can be
// driven by the same scripts as OpenCode. Pure: a Messages request is read as the chat request the
// scripts already understand, and a reply is written back as Messages SSE events or a message body.
import { z } from "zod"
import type { ChatRequest, Message } from "./conversation"
import { halves, type Reply, type Usage } from "./reply"

const Block = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]).optional(),
})

const Content = z.union([z.string(), z.array(Block)])

export const MessagesRequestSchema = z.looseObject({
  model: z.string(),
  max_tokens: z.number().optional(),
  system: Content.optional(),
  // Claude Code also sends `role: "system"` entries between turns (environment notes).
  messages: z.array(z.looseObject({ role: z.string(), content: Content })),
  tools: z.array(z.looseObject({ name: z.string() })).optional(),
  stream: z.boolean().optional(),
})

export type MessagesRequest = z.infer<typeof MessagesRequestSchema>
type Block = z.infer<typeof Block>

const textOfContent = (content: z.infer<typeof Content> | Block["content"] | undefined): string => {
  if (content === undefined) return ""
  if (typeof content === "string") return content
  return content.map((block) => (block.type === "text" ? (block.text ?? "") : "")).join("")
}

/**
 * The conversation as OpenAI chat messages. A user message carrying `tool_result` blocks becomes
 * one `role: "tool"` message per result and nothing else: Claude Code adds reminder text beside
 * results, which must not count as the person opening a new turn.
 */
function chatMessages(message: MessagesRequest["messages"][number]): Message[] {
  const blocks =
    typeof message.content === "string" ? [{ type: "text", text: message.content } as Block] : message.content
  if (message.role === "assistant") {
    const calls = blocks.filter((block) => block.type === "tool_use")
    return [
      {
        role: "assistant",
        content: textOfContent(blocks),
        ...(calls.length > 0 && {
          tool_calls: calls.map((call) => ({
            id: call.id ?? "",
            type: "function",
            function: { name: call.name ?? "", arguments: JSON.stringify(call.input ?? {}) },
          })),
        }),
      },
    ]
  }
  const results = blocks.filter((block) => block.type === "tool_result")
  if (message.role === "user" && results.length > 0)
    return results.map((result) => ({
      role: "tool",
      tool_call_id: result.tool_use_id ?? "",
      content: textOfContent(result.content),
    }))
  return [{ role: message.role, content: textOfContent(blocks) }]
}

/** The Messages request read as a chat-completions request, so `decide` and the recorders apply unchanged. */
export function toChatRequest(request: MessagesRequest): ChatRequest {
  const system = textOfContent(request.system)
  return {
    model: request.model,
    stream: request.stream,
    messages: [...(system ? [{ role: "system", content: system }] : []), ...request.messages.flatMap(chatMessages)],
    tools: request.tools?.map((tool) => ({ type: "function", function: { name: tool.name } })),
  }
}

export interface MessageEnvelope {
  id: string
  model: string
}

export const messageEnvelope = (model: string): MessageEnvelope => ({
  id: `msg_${crypto.randomUUID().replace(/-/g, "")}`,
  model,
})

const stopReason = (reply: Reply) => (reply.calls.length > 0 ? "tool_use" : "end_turn")

const parseArguments = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    // Arguments that are not JSON reach the tool as none; OpenCode's validation then reports them.
    return {}
  }
}

/** The reply's content blocks, as a non-streamed message holds them. */
function contentBlocks(reply: Reply) {
  return [
    ...(reply.text ? [{ type: "text", text: reply.text }] : []),
    ...reply.calls.map((call) => ({
      type: "tool_use",
      id: call.id,
      name: call.name,
      input: parseArguments(call.arguments),
    })),
  ]
}

export function messageBody(env: MessageEnvelope, reply: Reply, usage: Usage) {
  return {
    ...env,
    type: "message",
    role: "assistant",
    content: contentBlocks(reply),
    stop_reason: stopReason(reply),
    stop_sequence: null,
    usage: { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens },
  }
}

const event = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

/** `message_start`, sent before any latency so the client sees the answer begin. */
export const messageStart = (env: MessageEnvelope, usage: Usage) =>
  event("message_start", {
    message: {
      ...env,
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.prompt_tokens, output_tokens: 1 },
    },
  })

/** The events after `message_start`: one content block per text and tool call, then the stop reason and usage. */
export function messageEvents(reply: Reply, usage: Usage): string[] {
  const out: string[] = []
  let index = 0
  if (reply.text) {
    out.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }))
    for (const piece of halves(reply.text))
      out.push(event("content_block_delta", { index, delta: { type: "text_delta", text: piece } }))
    out.push(event("content_block_stop", { index }))
    index++
  }
  for (const call of reply.calls) {
    out.push(
      event("content_block_start", {
        index,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
      }),
    )
    for (const piece of halves(call.arguments))
      out.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }))
    out.push(event("content_block_stop", { index }))
    index++
  }
  out.push(
    event("message_delta", {
      delta: { stop_reason: stopReason(reply), stop_sequence: null },
      usage: { output_tokens: usage.completion_tokens },
    }),
  )
  out.push(event("message_stop", {}))
  return out
}

/** What a cut stream gets out before the connection drops: the first third of a text answer. */
export function cutEvents(reply: Reply): string[] {
  if (!reply.text) return []
  const text = reply.text.slice(0, Math.max(1, Math.floor(reply.text.length / 3)))
  return [
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }),
  ]
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "api_error",
  503: "overloaded_error",
}

/**
 * An OpenAI-shaped error answer as Anthropic words it, `{type: "error", error: {type, message}}`, keeping its status
 * and retry headers.
 */
export async function anthropicError(response: Response): Promise<Response> {
  // Our own error answers are JSON; anything else keeps the status text as its message.
  const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } }
  const type = ERROR_TYPES[response.status] ?? "api_error"
  const answer = Response.json(
    { type: "error", error: { type, message: body.error?.message ?? response.statusText } },
    { status: response.status },
  )
  for (const name of ["retry-after", "retry-after-ms"]) {
    const value = response.headers.get(name)
    if (value !== null) answer.headers.set(name, value)
  }
  return answer
}
