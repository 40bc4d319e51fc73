// Why a delegation failed, in words the parent can act on: OpenCode's error object (an assistant
// message's `error`, or a session.error event's), the last retry message OpenCode showed while it kept
// retrying a failing provider, and how the turn ended, folded into one kind with advice and a next
// step. Pure and table-driven: the first rule that matches names the kind.
import type { Status } from "./result"

export const FAILURE_KINDS = [
  "rate_limit",
  "quota",
  "auth",
  "model_not_found",
  "context_length",
  "output_limit",
  "overloaded",
  "network",
  "timeout",
  "sandbox",
  "cancelled",
  "budget",
  "server_lost",
  "unknown",
] as const
export type FailureKind = (typeof FAILURE_KINDS)[number]

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
      has(
        s,
        /connection (reset|refused|error|closed)|econn|socket|fetch failed|network|etimedout|terminated|stream (ended|closed)/,
      ),
  },
  { kind: "timeout", when: (s) => s.status === "timed_out" },
]

/** The advice and next step per kind; `wait` is the retry-after when the provider gave one. */
const ADVICE: Record<FailureKind, (wait?: number) => { advice: string; next: string; transient: boolean }> = {
  rate_limit: (wait) => ({
    transient: true,
    advice: "The provider is rate limiting this model.",
    next: `Wait ${wait ?? 60} s and retry, or pass another model (see the models tool).`,
  }),
  quota: () => ({
    transient: false,
    advice: "The provider account's quota or credit is spent.",
    next: "Top up or raise the quota with the provider, or pass another provider's model (see the models tool).",
  }),
  auth: () => ({
    transient: false,
    advice: "The provider refused the credentials OpenCode sent.",
    next: "Run `opencode auth login` for that provider (or fix its API key), then `opencode-mcp-orchestrator doctor`.",
  }),
  model_not_found: () => ({
    transient: false,
    advice: "The provider does not serve this model (or not to this account).",
    next: "Pick a model the models tool lists, or fix models.<role> in config.json.",
  }),
  context_length: () => ({
    transient: false,
    advice: "The conversation no longer fits the model's context window.",
    next: "Shorten the brief (point at files instead of pasting them) or split the task, or pass a model with a larger context.",
  }),
  output_limit: () => ({
    transient: false,
    advice: "The model hit its output limit before finishing.",
    next: "Ask for a shorter report (or split the task), or pass a model with a larger output limit.",
  }),
  overloaded: (wait) => ({
    transient: true,
    advice: "The provider is failing or overloaded on its side.",
    next: `Wait ${wait ?? 30} s and retry, or pass another model (see the models tool).`,
  }),
  network: (wait) => ({
    transient: true,
    advice: "The connection to the provider broke.",
    next: `Retry in ${wait ?? 10} s; if it persists, run \`opencode-mcp-orchestrator doctor\` and check the network or proxy.`,
  }),
  timeout: () => ({
    transient: false,
    advice: "The task ran out of its time budget.",
    next: "Check files_changed, then task_continue with a narrower brief or raise timeoutLimits.",
  }),
  sandbox: () => ({
    transient: false,
    advice: "The sandbox could not be set up for this workspace.",
    next: "Run `opencode-mcp-orchestrator doctor` and fix what it reports.",
  }),
  cancelled: () => ({
    transient: false,
    advice: "The task was cancelled.",
    next: "Nothing to fix; start it again if it is still wanted.",
  }),
  budget: () => ({
    transient: false,
    advice: "The task was stopped for spending more than its cap (maxTokensPerTask or maxCostPerTask in config.json).",
    next: "Check files_changed, then start a narrower brief or a cheaper model; raise the cap in config.json if the task needs it.",
  }),
  server_lost: () => ({
    transient: true,
    advice: "The shared OpenCode server stopped while the task ran.",
    next: "Run `opencode-mcp-orchestrator doctor`, then retry; the next call starts a new server.",
  }),
  unknown: () => ({
    transient: false,
    advice: "The failure did not match a known provider error.",
    next: "Read the error and the transcript; run `opencode-mcp-orchestrator doctor` if it repeats.",
  }),
}

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

/** The table the README shows: every kind with its advice and next step. */
export const adviceTable = () => FAILURE_KINDS.map((kind) => ({ kind, ...ADVICE[kind]() }))

/** Automatic retries of a read-only task after a transient failure, on top of the first attempt. */
export const TRANSIENT_RETRIES = 2
const BACKOFF_BASE_MS = 2000
const BACKOFF_CAP_MS = 30_000
/** A retry needs this much of the deadline left after its wait, or it would only time out. */
const RETRY_MARGIN_MS = 10_000

export interface RetryFacts {
  failure: Failure | undefined
  writable: boolean
  /** The failed attempt answered or ran tools: running it again would repeat visible work. */
  produced: boolean
  /** Automatic retries already made for this turn. */
  retries: number
  /** Milliseconds left before the task's deadline. */
  msLeft: number
}

/**
 * How long to wait before running a failed read-only turn again, or undefined when it must not be:
 * a writer never is (its edits are in the workspace, and the parent decides), nor a turn that had
 * produced output, nor a failure that retrying unchanged cannot fix.
 */
export function retryDelay(facts: RetryFacts): number | undefined {
  const { failure } = facts
  if (
    !failure?.transient ||
    failure.kind === "server_lost" ||
    facts.writable ||
    facts.produced ||
    facts.retries >= TRANSIENT_RETRIES
  )
    return undefined
  const delayMs = Math.min(
    BACKOFF_CAP_MS,
    failure.retryAfterS !== undefined ? failure.retryAfterS * 1000 : BACKOFF_BASE_MS * 2 ** facts.retries,
  )
  return facts.msLeft - delayMs >= RETRY_MARGIN_MS ? delayMs : undefined
}
