// A question no person could be reached for may wait for the parent agent's answer (task_respond).
// The parent is a model: what it is asked lands in its transcript, and what it answers it may have
// read anywhere. So a question that asks for a credential, or carries one, never waits for it; and
// an answer must be one of the options the agent offered (free text only for a question without
// options), and bounded. Pure: an ask and an answer in, the answers OpenCode takes (or what is wrong) out.
import { normalise } from "./normalise"
import { findSecrets } from "./secrets"
import type { Ask } from "./asks"
import { agentLabel, type ShownAsk } from "./relay-bounds"

/** Characters of one answer the parent may give. */
export const ANSWER_CHARS = 2000

// A question asking for something only a person should hand over: a password, a token, a key, a code.
// Read as the secret guard reads text (normalise.ts: fullwidth letters folded, invisible ones dropped).
const CREDENTIAL = new RegExp(
  "\\b(?:pass(?:word|phrase|code)s?|passwd|pwd|secrets?|tokens?|api[\\s_-]?keys?|credentials?|logins?|" +
    "(?:private|ssh|access|secret|signing|license|licence)[\\s_-]?keys?|otp|2fa|mfa|totp|pin[\\s-]?(?:code|number)|" +
    "one[\\s-]?time[\\s-]?(?:code|password)|(?:auth|verification|recovery|backup)[\\s-]?codes?|" +
    "seed[\\s-]?phrase|mnemonic|cookies?|session[\\s_-]?(?:id|key|cookie)s?)\\b",
  "i",
)
// A word mixing Latin with Cyrillic or Greek letters ("pаssword" with a Cyrillic а) reads as a disguise.
const MIXED = /(?=\S*\p{Script=Latin})(?=\S*[\p{Script=Cyrillic}\p{Script=Greek}])\S+/u

/** Why the question may not wait for the parent's answer, or undefined when it may. */
export function notForParent(ask: Ask): string | undefined {
  if (ask.kind !== "question") return "only questions wait for task_respond"
  // task_respond takes one answer; the question tool asks one question at a time as models write it.
  if (ask.questions.length !== 1) return `it asks ${ask.questions.length} questions at once; task_respond answers one`
  const written = ask.questions
    .flatMap((question) => [
      question.question,
      question.header,
      ...question.options.flatMap((o) => [o.label, o.description]),
    ])
    .join("\n")
  const text = normalise(written).text
  if (CREDENTIAL.test(text)) return "it asks about a credential, which only a person may answer"
  if (MIXED.test(text)) return "it mixes alphabets within a word, as a disguised word would"
  if (findSecrets(written).length > 0) return "it carries what looks like a credential"
  return undefined
}

export type ReadAnswer = { answers: string[][] } | { wrong: string; next: string }

/**
 * The parent's answer as OpenCode's answers, in the agent's own label; or what is wrong with it. `shown`
 * is the one-question ask as the parent was shown it (relay-bounds.ts), `ask` as the agent wrote it.
 */
export function readAnswer(shown: ShownAsk, answer: string, ask: Ask): ReadAnswer {
  const question = shown.ask.kind === "question" ? shown.ask.questions[0] : undefined
  if (!question || ask.kind !== "question")
    return { wrong: "This task is not waiting for an answer to a question.", next: "Call task_status." }
  const labels = question.options.map((option) => option.label)
  if (answer.trim() === "") return { wrong: "The answer is empty.", next: "Pass one of the options or a short text." }
  if (answer.length > ANSWER_CHARS)
    return {
      wrong: `The answer has ${answer.length} characters (at most ${ANSWER_CHARS}).`,
      next: "Pass one of the options or a shorter text.",
    }
  if (!labels.includes(answer) && !takesFreeText(ask))
    return {
      wrong: `The answer "${answer.slice(0, 100)}" is not one of the options, and this question takes no free text.`,
      next: `Pass one of: ${labels.map((label) => JSON.stringify(label)).join(", ")}.`,
    }
  return { answers: [[agentLabel(shown, 0, answer)]] }
}

/**
 * A question takes free text from the parent when it offers no options, or says `custom: true`. OpenCode's
 * own form takes free text for any question, but its question tool gives the agent no way to refuse it:
 * an answer outside the choices the agent offered is far likelier the parent answering the wrong question.
 */
export function takesFreeText(ask: Ask): boolean {
  if (ask.kind !== "question" || !ask.questions[0]) return false
  return ask.questions[0].options.length === 0 || ask.questions[0].custom === true
}
