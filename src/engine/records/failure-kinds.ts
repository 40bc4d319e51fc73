// The kinds a failure is classified into (failure.ts decides which), each with the advice and next
// step the parent reads, and the table the README shows of them.

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

/** The advice and next step per kind; `wait` is the retry-after when the provider gave one. */
export const ADVICE: Record<FailureKind, (wait?: number) => { advice: string; next: string; transient: boolean }> = {
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
    next:
      "Shorten the brief (point at files instead of pasting them) or split the task, or pass a model with a " +
      "larger context.",
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
    next:
      `Retry in ${wait ?? 10} s; if it persists, run \`opencode-mcp-orchestrator doctor\` and check the ` +
      `network or proxy.`,
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
    next:
      "Check files_changed, then start a narrower brief or a cheaper model; raise the cap in config.json if " +
      "the task needs it.",
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

/** The table the README shows: every kind with its advice and next step. */
export const adviceTable = () => FAILURE_KINDS.map((kind) => ({ kind, ...ADVICE[kind]() }))
