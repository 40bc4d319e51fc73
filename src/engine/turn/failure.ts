// Why a delegation failed, in words the parent can act on: OpenCode's error object (an assistant
// message's `error`, or a session.error event's), the last retry message OpenCode showed while it kept
// retrying a failing provider, and how the turn ended, folded into one kind with advice and a next
// step. Pure and table-driven: the first rule that matches names the kind.
import { ADVICE, type FailureKind, type Status } from "../records"

/** OpenCode's error shape (`{ name, data }`), loose so any version's variant is accepted. */
export interface OpencodeError {
  name: string
  data?: Record<string, unknown>
}

export interface FailureFacts {
  status: Status
  /** OpenCode's error object, when the session reported one. */
  error?: OpencodeError
  /** The last `retrying (...)` message OpenCode showed while retrying a failing provider. */
  retrying?: string
  /** Any other text that says what failed (our own error line, a thrown error's message). */
  text?: string
  /** The shared OpenCode server stopped while the task ran. */
  lost?: boolean
  /** The task was stopped for going past a cap of config.json (maxTokensPerTask, maxCostPerTask). */
  overBudget?: boolean
}

export interface Failure {
  kind: FailureKind
  /** Worth trying again unchanged after a pause: the same brief may succeed then. */
  transient: boolean
  /** Seconds the provider asked us to wait (retry-after), when it said. */
  retryAfterS?: number
  advice: string
  next: string
}

/** What the rules read: the error's name, HTTP status, provider code and all the text, lowercased. */
interface Signals {
  status: Status
  name: string
  http?: number
  code: string
  text: string
  lost: boolean
  overBudget: boolean
}

interface Rule {
  kind: FailureKind
  when: (s: Signals) => boolean
}

const has = (s: Signals, pattern: RegExp) => pattern.test(s.text) || pattern.test(s.code)

/** In order: the first match wins (quota before rate_limit, since a spent quota is often a 429 too). */
const RULES: Rule[] = [
  // Our own stop for a spent cap aborts the session: that is the budget's, not a cancellation.
  { kind: "budget", when: (s) => s.overBudget },
  // Our deadline aborts the session too: that abort is the timeout's, not a cancellation.
  {
    kind: "cancelled",
    when: (s) => s.status === "cancelled" || (s.name === "MessageAbortedError" && s.status !== "timed_out"),
  },
  { kind: "server_lost", when: (s) => s.lost || s.code === "server_lost" },
  { kind: "sandbox", when: (s) => /\b(sandbox|bwrap|bubblewrap)\b/.test(s.text) && s.name === "" },
  {
    kind: "auth",
    when: (s) =>
      s.name === "ProviderAuthError" ||
      s.http === 401 ||
      s.http === 403 ||
      has(s, /invalid_api_key|authentication|unauthori[sz]ed|api key|permission_denied/),
  },
  {
    kind: "quota",
    when: (s) =>
      s.http === 402 ||
      has(s, /insufficient_quota|quota|billing|credits?\b|usage limit|insufficient (balance|funds)|payment required/),
  },
  { kind: "rate_limit", when: (s) => s.http === 429 || has(s, /rate.?limit|too many requests/) },
  {
    kind: "model_not_found",
    when: (s) =>
      has(
        s,
        /model_not_found|model .*(not found|does not exist|not exist)|unknown model|no such model|model not supported/,
      ) ||
      (s.http === 404 && /model/.test(s.text)),
  },
  {
    kind: "context_length",
    when: (s) =>
      s.name === "ContextOverflowError" ||
      has(s, /context_length_exceeded|context (length|window)|maximum context|prompt is too long|too many tokens/),
  },
  {
    kind: "output_limit",
    when: (s) => s.name === "MessageOutputLengthError" || has(s, /max_tokens|output length|maximum output/),
  },
  {
    kind: "overloaded",
    when: (s) =>
      (s.http !== undefined && s.http >= 500) ||
      has(s, /overloaded|unavailable|capacity|resource_exhausted|server_error|internal error/),
  },
  {
    kind: "network",
    when: (s) =>
      has(s, /connection (reset|refused|error|closed)|econn|socket|fetch failed|network/) ||
      has(s, /etimedout|terminated|stream (ended|closed)/),
  },
  { kind: "timeout", when: (s) => s.status === "timed_out" },
]

function signals(facts: FailureFacts): Signals {
  const data = facts.error?.data ?? {}
  const body = parseBody(data.responseBody)
  const pieces = [data.message, data.responseBody, facts.retrying, facts.text].filter(
    (piece): piece is string => typeof piece === "string",
  )
  return {
    status: facts.status,
    name: facts.error?.name ?? "",
    http: typeof data.statusCode === "number" ? data.statusCode : httpOf(facts.text),
    code: [body?.code, body?.type, data.code]
      .filter((value) => typeof value === "string")
      .join(" ")
      .toLowerCase(),
    text: pieces.join("\n").toLowerCase(),
    lost: facts.lost === true,
    overBudget: facts.overBudget === true,
  }
}

/** The `error` object of an OpenAI- or Anthropic-style error body, when the body is one. */
function parseBody(body: unknown): { code?: unknown; type?: unknown } | undefined {
  if (typeof body !== "string") return undefined
  try {
    const json = JSON.parse(body) as { error?: unknown; code?: unknown; type?: unknown }
    return typeof json.error === "object" && json.error !== null
      ? (json.error as { code?: unknown; type?: unknown })
      : json
  } catch {
    // Not JSON (an HTML error page, plain text): the text rules still read it.
    return undefined
  }
}

/** The HTTP status our own error line carries ("APIError (HTTP 429): ..."). */
function httpOf(text: string | undefined): number | undefined {
  const match = text?.match(/\(HTTP (\d{3})\)/)
  return match ? Number(match[1]) : undefined
}

/** Seconds from retry-after(-ms) headers, when the provider sent them. */
function retryAfter(error: OpencodeError | undefined): number | undefined {
  const headers = error?.data?.responseHeaders as Record<string, string> | undefined
  if (!headers) return undefined
  const ms = Number(headers["retry-after-ms"])
  if (Number.isFinite(ms) && ms > 0) return Math.ceil(ms / 1000)
  const seconds = Number(headers["retry-after"])
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : undefined
}

/** The failure's kind, advice and next step; undefined for a turn that did not fail. */
export function classifyFailure(facts: FailureFacts): Failure | undefined {
  const failed =
    facts.status === "failed" ||
    facts.status === "timed_out" ||
    facts.status === "cancelled" ||
    facts.error !== undefined ||
    facts.lost === true ||
    facts.overBudget === true
  if (!failed) return undefined
  const s = signals(facts)
  const kind = RULES.find((rule) => rule.when(s))?.kind ?? "unknown"
  const retryAfterS = retryAfter(facts.error)
  const { advice, next, transient } = ADVICE[kind](retryAfterS)
  // A provider that kept failing until our deadline is still a timeout for this task, but its cause is
  // the provider's: retrying it unchanged would only time out again, so it is not transient here.
  const exhausted = facts.status === "timed_out" && kind !== "timeout"
  return { kind, transient: transient && !exhausted, ...(retryAfterS !== undefined && { retryAfterS }), advice, next }
}
