// The permission relay's rules: which asks of a delegated agent may be put to the person through
// the parent's MCP client (elicitation), and how an ask reads in one line. Shell and the sandbox
// tools are never relayable: a person's "yes" must never become a way out of the sandbox.
import { clip, RELAY_BOUNDS } from "./relay-bounds"

/** Asks config.json `policy.relay` may name. */
export const RELAYABLE = ["question", "webfetch", "websearch"] as const
export type Relayable = (typeof RELAYABLE)[number]

export interface QuestionOption {
  label: string
  description: string
}

export interface Question {
  question: string
  header: string
  options: QuestionOption[]
  multiple?: boolean
}

/** What a delegated session asks for: a permission (OpenCode's name and patterns) or questions for the person. */
export type Ask =
  | { kind: "permission"; permission: string; patterns: string[] }
  | { kind: "question"; questions: Question[] }

/**
 * The person's answer (a permission granted once, or a question's chosen labels), or why there is
 * none. `unasked`: the ask never reached the person (a bound refused it), and the agent is told why.
 */
export type Verdict =
  | { kind: "granted" }
  | { kind: "answered"; answers: string[][] }
  | { kind: "refused"; reason: string; unasked?: boolean }

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
