// The wire shapes of an answer: OpenAI chat-completion chunks (SSE) and the non-streaming body.
// Pure functions; the server decides when each chunk is sent.
import type { ChatRequest } from "./conversation"

export interface Reply {
  text: string
  calls: { id: string; name: string; arguments: string }[]
  /** Reasoning sent before the answer, the way OpenAI-compatible thinking models stream it. */
  reasoning?: string
}

export interface Usage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}

/** Rough token counts (four characters a token), enough for OpenCode's context accounting. */
export function usageOf(request: ChatRequest, reply: Reply): Usage {
  const prompt =
    Math.ceil(JSON.stringify(request.messages).length / 4) + Math.ceil(JSON.stringify(request.tools ?? []).length / 4)
  const completion = Math.max(
    1,
    Math.ceil(((reply.reasoning?.length ?? 0) + reply.text.length + JSON.stringify(reply.calls).length) / 4),
  )
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}

const finishReason = (reply: Reply) => (reply.calls.length > 0 ? "tool_calls" : "stop")

interface Envelope {
  id: string
  model: string
  created: number
}

export function envelope(model: string): Envelope {
  return { id: `chatcmpl-${crypto.randomUUID()}`, model, created: Math.floor(Date.now() / 1000) }
}

function chunk(env: Envelope, delta: Record<string, unknown>, finish: string | null = null) {
  return { ...env, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }
}

const sse = (data: unknown) => `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`

/** The first chunk, sent before any latency so the client sees the answer start. */
export const openingChunk = (env: Envelope) => sse(chunk(env, { role: "assistant", content: "" }))

/** Halves of a string, so clients must join streamed pieces the way real providers split them. */
export function halves(text: string): string[] {
  if (text.length < 2) return [text]
  const middle = Math.ceil(text.length / 2)
  return [text.slice(0, middle), text.slice(middle)]
}

/** The chunks after the opening one: reasoning, content, tool calls, finish reason, usage, [DONE]. */
export function bodyChunks(env: Envelope, reply: Reply, usage: Usage | undefined): string[] {
  const out: string[] = []
  if (reply.reasoning)
    for (const piece of halves(reply.reasoning)) out.push(sse(chunk(env, { reasoning_content: piece })))
  if (reply.text) for (const piece of halves(reply.text)) out.push(sse(chunk(env, { content: piece })))
  reply.calls.forEach((call, index) => {
    const [first = "", second] = halves(call.arguments)
    out.push(
      sse(
        chunk(env, {
          tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: first } }],
        }),
      ),
    )
    if (second !== undefined) out.push(sse(chunk(env, { tool_calls: [{ index, function: { arguments: second } }] })))
  })
  out.push(sse(chunk(env, {}, finishReason(reply))))
  if (usage) out.push(sse({ ...env, object: "chat.completion.chunk", choices: [], usage }))
  out.push(sse("[DONE]"))
  return out
}

/** The chunks a cut stream gets out before the connection drops: the first third of a text answer. */
export function cutChunks(env: Envelope, reply: Reply): string[] {
  if (!reply.text) return []
  return [sse(chunk(env, { content: reply.text.slice(0, Math.max(1, Math.floor(reply.text.length / 3))) }))]
}

export function completionBody(env: Envelope, reply: Reply, usage: Usage) {
  const message = {
    role: "assistant",
    content: reply.text || null,
    ...(reply.reasoning && { reasoning_content: reply.reasoning }),
    ...(reply.calls.length > 0 && {
      tool_calls: reply.calls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      })),
    }),
  }
  return {
    ...env,
    object: "chat.completion",
    choices: [{ index: 0, message, finish_reason: finishReason(reply) }],
    usage,
  }
}
