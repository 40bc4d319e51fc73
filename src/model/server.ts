// The scripted model: an OpenAI-compatible chat-completions server on loopback that replays scripts
// to the real OpenCode. Every request is recorded so tests can check what OpenCode sent back (tool
// results arrive as `role: "tool"` messages in the next request).
import { ChatRequestSchema, toolResultsOf, type ChatRequest, type ToolResult } from "./conversation"
import { decide, type Play } from "./play"
import { bodyChunks, completionBody, cutChunks, envelope, openingChunk, usageOf } from "./reply"
import { builtinScripts, DEFAULT_SCRIPT, parseScript, type Failure, type Script, type ScriptInput } from "./script"

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
  body: ChatRequest
  /** OpenCode's session id: its `x-session-id` header, or `x-opencode-session` for providers named `opencode*`. */
  sessionId?: string
  play: Play
  /** The injected failure this attempt got, if any. */
  failed?: Failure["kind"]
  /** When it arrived (epoch ms): latency and retry spacing are observable. */
  at: number
}

export interface ScriptedModel {
  /** Base URL to configure as the provider's `baseURL`: `http://HOST:PORT/v1`. */
  url: string
  port: number
  /** Every chat request, in arrival order, including title requests and failed attempts. */
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

const errorBody = (status: number, message: string, type: string, code = type) => Response.json({ error: { message, type, code } }, { status })

/** The answers of the failures that are not a 429 with retry-after or a cut stream, as OpenAI words them. */
const FAILURE_BODIES: Partial<Record<Failure["kind"], () => Response>> = {
  "500": () => errorBody(500, "Internal error (scripted).", "server_error"),
  "401": () => errorBody(401, "Incorrect API key provided (scripted).", "invalid_request_error", "invalid_api_key"),
  quota: () => errorBody(429, "You exceeded your current quota, please check your plan and billing details (scripted).", "insufficient_quota"),
  unknown_model: () => errorBody(404, "The model `scripted-missing` does not exist or you do not have access to it (scripted).", "invalid_request_error", "model_not_found"),
  context: () =>
    errorBody(
      400,
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages (scripted).",
      "invalid_request_error",
      "context_length_exceeded",
    ),
  "503": () => errorBody(503, "The server is overloaded, please try again later (scripted).", "overloaded_error"),
}

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

  function injectedFailure(play: Play, sessionKey: string): Failure | undefined {
    if (play.kind !== "step" || !play.definition.fail) return undefined
    const failure = play.definition.fail
    const key = `${failure.per === "server" ? "*" : sessionKey}|${play.script}|${play.turn}|${play.step}`
    const count = fired.get(key) ?? 0
    if (failure.times !== "always" && count >= failure.times) return undefined
    fired.set(key, count + 1)
    return failure
  }

  async function complete(req: Request): Promise<Response> {
    // A body that is not JSON fails the schema below and gets its 400 answer.
    const parsed = ChatRequestSchema.safeParse(await req.json().catch(() => undefined))
    if (!parsed.success) return errorBody(400, "invalid chat completion request", "invalid_request_error")
    const body = parsed.data
    const sessionId = req.headers.get("x-session-id") ?? req.headers.get("x-opencode-session") ?? undefined
    const firstUser = JSON.stringify(body.messages.find((m) => m.role === "user") ?? "")
    const sessionKey = (sessionId ?? Bun.hash(firstUser).toString(36)).replace(/\W/g, "").slice(-12)
    const play = decide(scripts, defaultScript, body, sessionKey)
    const failure = injectedFailure(play, sessionKey)
    requests.push({ body, sessionId, play, failed: failure?.kind, at: Date.now() })
    if (failure?.kind === "429") {
      const response = errorBody(429, "Rate limit reached (scripted).", "rate_limit_exceeded")
      response.headers.set("retry-after", String(failure.retryAfterSeconds))
      response.headers.set("retry-after-ms", String(Math.round(failure.retryAfterSeconds * 1000)))
      return response
    }
    const failed = failure && FAILURE_BODIES[failure.kind]
    if (failed) return failed()
    const delayMs = play.kind === "step" ? (play.definition.delayMs ?? 0) : 0
    const env = envelope(body.model)
    const usage = usageOf(body, play.reply)
    if (!body.stream) {
      await sleep(delayMs, AbortSignal.any([req.signal, stopping.signal]))
      const text = JSON.stringify(completionBody(env, play.reply, usage))
      const payload = failure?.kind === "cut" ? text.slice(0, text.length >> 1) : text
      return new Response(payload, { headers: { "content-type": "application/json" } })
    }
    const withUsage = body.stream_options?.include_usage === true
    const signal = AbortSignal.any([req.signal, stopping.signal])
    const stream = new ReadableStream<string>({
      async pull(controller) {
        controller.enqueue(openingChunk(env))
        await sleep(delayMs, signal)
        if (signal.aborted) return controller.close()
        if (failure?.kind === "cut") {
          for (const piece of cutChunks(env, play.reply)) controller.enqueue(piece)
          await sleep(20, signal) // let the partial answer reach the client before the drop
          // Erroring with no reason resets the connection without Bun logging a stack.
          return controller.error(undefined)
        }
        for (const piece of bodyChunks(env, play.reply, withUsage ? usage : undefined)) controller.enqueue(piece)
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
      if (req.method === "POST" && path === "/chat/completions") return complete(req)
      return errorBody(404, `no route ${req.method} ${path}`, "not_found")
    },
  })
  const port = server.port ?? options.port ?? 0
  const host = options.host ?? "127.0.0.1"

  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/v1`,
    port,
    requests,
    setScript: (name, script) => void scripts.set(name, parseScript(script)),
    stepRequests: () => requests.filter((r) => r.play.kind !== "title"),
    toolResults() {
      const seen = new Map<string, ToolResult>()
      for (const request of requests) for (const result of toolResultsOf(request.body.messages)) seen.set(result.callId, result)
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
