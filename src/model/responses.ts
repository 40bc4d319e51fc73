// The OpenAI Responses API face of the scripted model (`POST /v1/responses`), the wire Codex speaks
// (`wire_api = "responses"`). Pure: a Responses request is read as the chat request the scripts
// already play (`function_call_output` items become tool messages), and a reply is written back as
// the SSE events Codex parses: response.created, output_item.added/done, output_text.delta and
// response.completed with usage. Codex offers an MCP server's tools as one `namespace` tool; a
// script names such a tool `NAMESPACE__TOOL` (`mcp__opencode_agents__scout`), and the call goes out
// as `{name: TOOL, namespace: NAMESPACE}`.
import { z } from "zod"
import type { ChatRequest, Message } from "./conversation"
import { halves, type Reply, type Usage } from "./reply"

const Part = z.looseObject({ type: z.string(), text: z.string().optional() })
const Content = z.union([z.string(), z.array(Part)])

const Item = z.looseObject({
  type: z.string().optional(),
  role: z.string().optional(),
  content: Content.optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  arguments: z.string().optional(),
  call_id: z.string().optional(),
  output: Content.optional(),
})

const Tool = z.looseObject({
  type: z.string(),
  name: z.string().optional(),
  tools: z.array(z.looseObject({ name: z.string() })).optional(),
})

export const ResponsesRequestSchema = z.looseObject({
  model: z.string(),
  instructions: z.string().optional(),
  input: z.union([z.string(), z.array(Item)]),
  tools: z.array(Tool).optional(),
  stream: z.boolean().optional(),
})

export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>
type Item = z.infer<typeof Item>

const textOfContent = (content: z.infer<typeof Content> | undefined): string =>
  content === undefined ? "" : typeof content === "string" ? content : content.map((part) => part.text ?? "").join("")

/** The name a script uses for a call: a namespaced tool is `NAMESPACE__TOOL`. */
const fullName = (item: Item) => (item.namespace ? `${item.namespace}__${item.name ?? ""}` : (item.name ?? ""))

/**
 * The input items as chat messages. Developer and system messages become system messages; the
 * function calls of one answer join the assistant message before them, so a step counts once.
 */
function chatMessages(items: Item[]): Message[] {
  const messages: Message[] = []
  for (const item of items) {
    const type = item.type ?? "message"
    if (type === "message") {
      const role = item.role === "developer" ? "system" : (item.role ?? "user")
      messages.push({ role, content: textOfContent(item.content) })
    } else if (type === "function_call") {
      const call = {
        id: item.call_id ?? "",
        type: "function",
        function: { name: fullName(item), arguments: item.arguments ?? "{}" },
      }
      const last = messages.at(-1)
      if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call]
      else messages.push({ role: "assistant", content: "", tool_calls: [call] })
    } else if (type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id ?? "", content: textOfContent(item.output) })
    }
    // Reasoning and other items carry nothing the scripts read.
  }
  return messages
}

/** Every tool offered, by the name a script uses: a namespace's tools as `NAMESPACE__TOOL`. */
const toolNames = (tools: ResponsesRequest["tools"]) =>
  (tools ?? []).flatMap((tool) =>
    tool.type === "namespace" ? (tool.tools ?? []).map((t) => `${tool.name}__${t.name}`) : tool.name ? [tool.name] : [],
  )

/** The Responses request read as a chat-completions request, so `decide` and the recorders apply unchanged. */
export function toChatRequestFromResponses(request: ResponsesRequest): ChatRequest {
  const input =
    typeof request.input === "string" ? [{ type: "message", role: "user", content: request.input }] : request.input
  return {
    model: request.model,
    stream: request.stream,
    messages: [
      ...(request.instructions ? [{ role: "system", content: request.instructions }] : []),
      ...chatMessages(input),
    ],
    tools: toolNames(request.tools).map((name) => ({ type: "function", function: { name } })),
  }
}

/** The namespaces offered, longest first, so a call splits at the namespace it belongs to. */
export const namespacesOf = (request: ResponsesRequest): string[] =>
  (request.tools ?? [])
    .filter((tool) => tool.type === "namespace" && tool.name)
    .map((tool) => tool.name ?? "")
    .sort((a, b) => b.length - a.length)

export interface ResponseEnvelope {
  id: string
  model: string
  /** Namespaces offered in the request, to split a script's `NAMESPACE__TOOL` call. */
  namespaces: readonly string[]
}

export const responseEnvelope = (model: string, namespaces: readonly string[] = []): ResponseEnvelope => ({
  id: `resp_${crypto.randomUUID().replace(/-/g, "")}`,
  model,
  namespaces,
})

const event = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

function callItem(env: ResponseEnvelope, call: Reply["calls"][number]) {
  const namespace = env.namespaces.find((ns) => call.name.startsWith(`${ns}__`))
  const name = namespace ? call.name.slice(namespace.length + 2) : call.name
  return {
    type: "function_call",
    id: `fc_${call.id}`,
    call_id: call.id,
    name,
    ...(namespace && { namespace }),
    arguments: call.arguments,
    status: "completed",
  }
}

const messageItem = (env: ResponseEnvelope, text: string) => ({
  type: "message",
  id: `msg_${env.id.slice(5)}`,
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }],
})

/** The output items of a reply, in order: its text, then its calls. */
const outputItems = (env: ResponseEnvelope, reply: Reply) => [
  ...(reply.text ? [messageItem(env, reply.text)] : []),
  ...reply.calls.map((call) => callItem(env, call)),
]

const usageBody = (usage: Usage) => ({
  input_tokens: usage.prompt_tokens,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: usage.completion_tokens,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.total_tokens,
})

export function responseBody(env: ResponseEnvelope, reply: Reply, usage: Usage) {
  return {
    id: env.id,
    object: "response",
    model: env.model,
    status: "completed",
    output: outputItems(env, reply),
    usage: usageBody(usage),
  }
}

/** `response.created`, sent before any latency so the client sees the answer begin. */
export const responseCreated = (env: ResponseEnvelope) =>
  event("response.created", {
    response: { id: env.id, object: "response", model: env.model, status: "in_progress", output: [] },
  })

/** The events after `response.created`: each output item added, its text deltas, done; then completed with usage. */
export function responseEvents(env: ResponseEnvelope, reply: Reply, usage: Usage): string[] {
  const out: string[] = []
  outputItems(env, reply).forEach((item, index) => {
    if (item.type === "message") {
      out.push(
        event("response.output_item.added", {
          output_index: index,
          item: { ...item, status: "in_progress", content: [] },
        }),
      )
      for (const piece of halves(reply.text))
        out.push(
          event("response.output_text.delta", {
            output_index: index,
            content_index: 0,
            item_id: item.id,
            delta: piece,
          }),
        )
    } else
      out.push(
        event("response.output_item.added", {
          output_index: index,
          item: { ...item, status: "in_progress", arguments: "" },
        }),
      )
    out.push(event("response.output_item.done", { output_index: index, item }))
  })
  out.push(event("response.completed", { response: responseBody(env, reply, usage) }))
  return out
}

/** What a cut stream gets out before the connection drops: the first third of a text answer. */
export function cutResponseEvents(env: ResponseEnvelope, reply: Reply): string[] {
  if (!reply.text) return []
  const item = messageItem(env, "")
  const text = reply.text.slice(0, Math.max(1, Math.floor(reply.text.length / 3)))
  return [
    event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } }),
    event("response.output_text.delta", { output_index: 0, content_index: 0, item_id: item.id, delta: text }),
  ]
}
