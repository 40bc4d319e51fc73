// The scripted model: an OpenAI-compatible chat-completions server on loopback that replays scripts
// to the real OpenCode, and the same scripts as an Anthropic Messages API for Claude Code. Every
// request is recorded so tests can check what the client sent back (tool results arrive as
// `role: "tool"` messages in the next request).
import { toolResultsOf, type ChatRequest, type ToolResult } from "./conversation"
import { decide, type Play } from "./play"
import type { Usage } from "./reply"
import { builtinScripts, DEFAULT_SCRIPT, parseScript, type Failure, type Script, type ScriptInput } from "./script"
import { anthropicError } from "./anthropic"
import { API_NAMES, countTokens, errorBody, FAILURE_BODIES, readRequest, wireFor, type Api } from "./wire"

export const SCRIPTED_MODELS = ["fast", "second"] as const

export interface ScriptedModelOptions {
  /** Scripts by name, added to the built-in `demo`; a request picks one with `[script:NAME]`. */
  scripts?: Record<string, ScriptInput>
  /** The script played when a request names none (default `demo`). */
  defaultScript?: string
  /** Model ids served (default `fast`, `second`). */
  models?: readonly string[]
  port?: number
  host?: string
}

export interface RecordedRequest {
  api: Api
  /**
   * The request as chat completions (Messages and Responses requests are translated, tool results become `role:
   * "tool"`).
   */
  body: ChatRequest
  /**
   * The client's session id: OpenCode's `x-session-id` (`x-opencode-session` for providers named `opencode*`), or
   * Claude Code's `x-claude-code-session-id`.
   */
  sessionId?: string
  play: Play
  /** The injected failure this attempt got, if any. */
  failed?: Failure["kind"]
  /** When it arrived (epoch ms): latency and retry spacing are observable. */
  at: number
  /** The usage the answer reported, set once the whole answer was sent: what a provider would bill. */
  billed?: Usage
}

export interface ScriptedModel {
  /** Base URL to configure as the provider's `baseURL`: `http://HOST:PORT/v1`. */
  url: string
  /**
   * Base URL for an Anthropic client (Claude Code's `ANTHROPIC_BASE_URL`): `http://HOST:PORT`, which it extends with
   * `/v1/messages`.
   */
  origin: string
  port: number
  /** Every request on either API, in arrival order, including title requests and failed attempts. */
  requests: RecordedRequest[]
  setScript(name: string, script: ScriptInput): void
  /** Requests that played a script step (not title requests). */
  stepRequests(): RecordedRequest[]
  /** Every distinct tool result OpenCode reported back, in order. */
  toolResults(): ToolResult[]
  /** Forgets recorded requests and fired failures. */
  reset(): void
  stop(): Promise<void>
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done, { once: true })
  })

/** The client's session id: OpenCode's, Claude Code's, or Codex's `session_id`. */
const SESSION_HEADERS = ["x-session-id", "x-opencode-session", "x-claude-code-session-id", "session_id"]

export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
  const scripts = new Map<string, Script>(Object.entries(builtinScripts()))
  for (const [name, script] of Object.entries(options.scripts ?? {})) scripts.set(name, parseScript(script))
  const defaultScript = options.defaultScript ?? DEFAULT_SCRIPT
  const models = options.models ?? SCRIPTED_MODELS
  const requests: RecordedRequest[] = []
  /** Failed attempts per session and step, so a `times: 1` failure lets the retry through. */
  const fired = new Map<string, number>()
  /** Ends pending latencies when the server stops, so no timer outlives it. */
  const stopping = new AbortController()

  function injectedFailure(play: Play, sessionKey: string, model: string): Failure | undefined {
    if (play.kind !== "step" || !play.definition.fail) return undefined
    const failure = play.definition.fail
    if (failure.model !== undefined && failure.model !== model) return undefined
    const key = `${failure.per === "server" ? "*" : sessionKey}|${play.script}|${play.turn}|${play.step}`
    const count = fired.get(key) ?? 0
    if (failure.times !== "always" && count >= failure.times) return undefined
    fired.set(key, count + 1)
    return failure
  }

  async function complete(req: Request, api: Api): Promise<Response> {
    // A body that is not JSON fails the schema below and gets its 400 answer.
    const read = readRequest(api, await req.json().catch(() => undefined))
    const fault = (response: Response) => (api === "messages" ? anthropicError(response) : response)
    if (!read) return fault(errorBody(400, `invalid ${API_NAMES[api]} request`, "invalid_request_error"))
    const body = read.body
    const sessionId = SESSION_HEADERS.map((name) => req.headers.get(name)).find((value) => value !== null) ?? undefined
    const firstUser = JSON.stringify(body.messages.find((m) => m.role === "user") ?? "")
    const sessionKey = (sessionId ?? Bun.hash(firstUser).toString(36)).replace(/\W/g, "").slice(-12)
    const play = decide(scripts, defaultScript, body, sessionKey)
    const failure = injectedFailure(play, sessionKey, body.model)
    const recorded: RecordedRequest = { api, body, sessionId, play, failed: failure?.kind, at: Date.now() }
    requests.push(recorded)
    if (failure?.kind === "429") {
      const response = errorBody(429, "Rate limit reached (scripted).", "rate_limit_exceeded")
      response.headers.set("retry-after", String(failure.retryAfterSeconds))
      response.headers.set("retry-after-ms", String(Math.round(failure.retryAfterSeconds * 1000)))
      return fault(response)
    }
    const failed = failure && FAILURE_BODIES[failure.kind]
    if (failed) return fault(failed())
    const delayMs = play.kind === "step" ? (play.definition.delayMs ?? 0) : 0
    const wire = wireFor(api, read, play.reply)
    const signal = AbortSignal.any([req.signal, stopping.signal])
    if (!body.stream) {
      await sleep(delayMs, signal)
      const text = JSON.stringify(wire.whole)
      const payload = failure?.kind === "cut" ? text.slice(0, text.length >> 1) : text
      if (failure?.kind !== "cut" && !signal.aborted) recorded.billed = wire.usage
      return new Response(payload, { headers: { "content-type": "application/json" } })
    }
    const stream = new ReadableStream<string>({
      async pull(controller) {
        controller.enqueue(wire.opening)
        await sleep(delayMs, signal)
        if (signal.aborted) return controller.close()
        if (failure?.kind === "cut") {
          for (const piece of wire.cut) controller.enqueue(piece)
          await sleep(20, signal) // let the partial answer reach the client before the drop
          // Erroring with no reason resets the connection without Bun logging a stack.
          return controller.error(undefined)
        }
        for (const piece of wire.rest) controller.enqueue(piece)
        recorded.billed = wire.streamed
        controller.close()
      },
    })
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" },
    })
  }

  const server = Bun.serve({
    port: options.port ?? 0,
    hostname: options.host ?? "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname.replace(/^\/v1/, "")
      if (req.method === "GET" && path === "/models")
        return Response.json({
          object: "list",
          data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "scripted" })),
        })
      if (req.method === "POST" && path === "/chat/completions") return complete(req, "chat")
      if (req.method === "POST" && path === "/messages") return complete(req, "messages")
      if (req.method === "POST" && path === "/messages/count_tokens") return countTokens(req)
      if (req.method === "POST" && path === "/responses") return complete(req, "responses")
      return errorBody(404, `no route ${req.method} ${path}`, "not_found")
    },
  })
  const port = server.port ?? options.port ?? 0
  const host = options.host ?? "127.0.0.1"

  const origin = `http://${host.includes(":") ? `[${host}]` : host}:${port}`
  return {
    url: `${origin}/v1`,
    origin,
    port,
    requests,
    setScript: (name, script) => void scripts.set(name, parseScript(script)),
    stepRequests: () => requests.filter((r) => r.play.kind !== "title"),
    toolResults() {
      const seen = new Map<string, ToolResult>()
      for (const request of requests)
        for (const result of toolResultsOf(request.body.messages)) seen.set(result.callId, result)
      return [...seen.values()]
    },
    reset() {
      requests.length = 0
      fired.clear()
    },
    stop() {
      stopping.abort()
      return server.stop(true)
    },
  }
}
