// The three wire formats the scripted model speaks: a request read as chat completions whatever API it
// came on, a reply written back in that API's events or body, and the error answers a provider gives.
import {
  anthropicError,
  cutEvents,
  messageBody,
  messageEnvelope,
  messageEvents,
  MessagesRequestSchema,
  messageStart,
  toChatRequest,
} from "./anthropic"
import { ChatRequestSchema, type ChatRequest } from "./conversation"
import {
  cutResponseEvents,
  namespacesOf,
  responseBody,
  responseCreated,
  responseEnvelope,
  responseEvents,
  ResponsesRequestSchema,
  toChatRequestFromResponses,
} from "./responses"
import { bodyChunks, completionBody, cutChunks, envelope, openingChunk, usageOf, type Reply } from "./reply"
import type { Failure } from "./script"

/**
 * The API a request came in on: OpenAI chat completions (OpenCode), Anthropic Messages (Claude Code) or OpenAI
 * Responses (Codex).
 */
export type Api = "chat" | "messages" | "responses"

export const errorBody = (status: number, message: string, type: string, code = type) =>
  Response.json({ error: { message, type, code } }, { status })

/** The answers of the failures that are not a 429 with retry-after or a cut stream, as OpenAI words them. */
export const FAILURE_BODIES: Partial<Record<Failure["kind"], () => Response>> = {
  "500": () => errorBody(500, "Internal error (scripted).", "server_error"),
  "401": () => errorBody(401, "Incorrect API key provided (scripted).", "invalid_request_error", "invalid_api_key"),
  quota: () =>
    errorBody(
      429,
      "You exceeded your current quota, please check your plan and billing details (scripted).",
      "insufficient_quota",
    ),
  unknown_model: () =>
    errorBody(
      404,
      "The model `scripted-missing` does not exist or you do not have access to it (scripted).",
      "invalid_request_error",
      "model_not_found",
    ),
  context: () =>
    errorBody(
      400,
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please " +
        "reduce the length of the messages (scripted).",
      "invalid_request_error",
      "context_length_exceeded",
    ),
  "503": () => errorBody(503, "The server is overloaded, please try again later (scripted).", "overloaded_error"),
}

interface Read {
  body: ChatRequest
  /** The Responses request's tool namespaces (Codex's MCP servers), to split a namespaced call. */
  namespaces: string[]
}

/** The request as chat completions, or undefined when it is not a valid request of its API. */
export function readRequest(api: Api, json: unknown): Read | undefined {
  if (api === "chat") {
    const body = ChatRequestSchema.safeParse(json).data
    return body && { body, namespaces: [] }
  }
  if (api === "responses") {
    const parsed = ResponsesRequestSchema.safeParse(json)
    return parsed.success
      ? { body: toChatRequestFromResponses(parsed.data), namespaces: namespacesOf(parsed.data) }
      : undefined
  }
  const parsed = MessagesRequestSchema.safeParse(json)
  return parsed.success ? { body: toChatRequest(parsed.data), namespaces: [] } : undefined
}

export const API_NAMES: Record<Api, string> = { chat: "chat completion", messages: "messages", responses: "responses" }

/** Anthropic's token count of a prompt, the same rough count the answers report. */
export async function countTokens(req: Request): Promise<Response> {
  // A body that is not JSON fails the schema and gets its 400 answer.
  const body = readRequest("messages", await req.json().catch(() => undefined))?.body
  if (!body) return anthropicError(errorBody(400, "invalid messages request", "invalid_request_error"))
  return Response.json({ input_tokens: usageOf(body, { text: "", calls: [] }).prompt_tokens })
}

/**
 * A reply in the request's wire format: the first event (sent before latency), the rest, a cut stream's part, and the
 * non-streamed body.
 */
export function wireFor(api: Api, { body, namespaces }: Read, reply: Reply) {
  const usage = usageOf(body, reply)
  if (api === "responses") {
    const env = responseEnvelope(body.model, namespaces)
    return {
      opening: responseCreated(env),
      rest: responseEvents(env, reply, usage),
      cut: cutResponseEvents(env, reply),
      whole: responseBody(env, reply, usage),
      usage,
      streamed: usage,
    }
  }
  if (api === "messages") {
    const env = messageEnvelope(body.model)
    return {
      opening: messageStart(env, usage),
      rest: messageEvents(reply, usage),
      cut: cutEvents(reply),
      whole: messageBody(env, reply, usage),
      usage,
      streamed: usage,
    }
  }
  const env = envelope(body.model)
  const withUsage = body.stream_options?.include_usage === true
  const streamed = withUsage ? usage : undefined
  return {
    opening: openingChunk(env),
    rest: bodyChunks(env, reply, streamed),
    cut: cutChunks(env, reply),
    whole: completionBody(env, reply, usage),
    usage,
    streamed,
  }
}
