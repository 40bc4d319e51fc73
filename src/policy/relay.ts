// The permission relay's rules: which asks of a delegated agent may be put to the person through
// the parent's MCP client (elicitation), and how an ask reads in one line. Shell and the sandbox
// tools are never relayable: a person's "yes" must never become a way out of the sandbox.
import type { Ask } from "./asks"
import { clip, RELAY_BOUNDS } from "./relay-bounds"

/** Asks config.json `policy.relay` may name. */
export const RELAYABLE = ["question", "webfetch", "websearch"] as const
export type Relayable = (typeof RELAYABLE)[number]

/**
 * The person's answer (a permission granted once, or a question's chosen labels), or why there is
 * none. `unasked`: the ask never reached the person (a bound refused it), and the agent is told why.
 * `unreachable`: no person could be reached (no elicitation, the call returned or was cancelled, the
 * form dismissed), so a question may wait for the parent's task_respond instead (engine/turn/inbox.ts).
 * `by`: who answered, when not the person through the form.
 */
export type Verdict =
  | { kind: "granted" }
  | { kind: "answered"; answers: string[][]; by?: "task_respond" }
  | { kind: "refused"; reason: string; unasked?: boolean; unreachable?: boolean }

/** Why an ask is refused when the calling client cannot put it to the person. */
export const NO_ELICITATION: Verdict = {
  kind: "refused",
  reason: "no one to ask: the calling client cannot relay asks to the person (no MCP elicitation)",
  unreachable: true,
}

/**
 * Puts an ask to the person, or says why no one can answer it. `asking` is called once the ask has
 * actually gone out, so progress says "asked the person" only when someone was asked.
 */
export type Relay = (ask: Ask, asking: () => void) => Promise<Verdict>

/** Characters of each question or pattern in the one-line form of an ask. */
const PART_CHARS = 200

/** The ask in one line, as the person and the progress read it: bounded, however long the ask. */
export function describeAsk(ask: Ask): string {
  const parts = ask.kind === "question" ? ask.questions.map((question) => question.question) : ask.patterns
  const line = parts
    .map((part) => clip(part.replace(/\s+/g, " "), PART_CHARS))
    .join(ask.kind === "question" ? " / " : " ")
  return clip(ask.kind === "question" ? line : `${ask.permission} ${line}`.trimEnd(), RELAY_BOUNDS.messageChars)
}

/** The verdict in a few words for progress. */
export function describeVerdict(verdict: Verdict): string {
  if (verdict.kind === "granted") return "allowed once"
  if (verdict.kind === "answered")
    return verdict.answers.map((answer) => answer.join(", ") || "(no answer)").join(" / ")
  return `refused: ${verdict.reason}`
}
