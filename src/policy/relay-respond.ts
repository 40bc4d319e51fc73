// A question no person could be reached for may wait for the parent agent's answer (task_respond).
// The parent is a model: what it is asked lands in its transcript, and what it answers it may have
// read anywhere. So a question that asks for a credential, or carries one, never waits for it; and
// an answer must be one of the options the agent offered, or free text only where the agent allows
// it, and bounded. Pure: an ask and an answer in, the answers OpenCode takes (or what is wrong) out.
import { findSecrets } from "./secrets"
import type { Ask } from "./relay"
import { agentLabel, type ShownAsk } from "./relay-bounds"

/** Characters of one answer the parent may give. */
export const ANSWER_CHARS = 2000

// A question asking for something only a person should hand over: a password, a token, a key, a code.
const CREDENTIAL = new RegExp(
  "\\b(?:pass(?:word|phrase|code)s?|passwd|secrets?|tokens?|api[\\s_-]?keys?|credentials?|" +
    "(?:private|ssh|access|secret|signing)[\\s_-]?keys?|otp|2fa|mfa|one[\\s-]?time[\\s-]?(?:code|password)|pin)\\b",
  "i",
)

/** Why the question may not wait for the parent's answer, or undefined when it may. */
export function notForParent(ask: Ask): string | undefined {
  if (ask.kind !== "question") return "only questions wait for task_respond"
  const text = ask.questions
    .flatMap((question) => [question.question, question.header, ...question.options.map((o) => o.label)])
    .join("\n")
  if (CREDENTIAL.test(text)) return "it asks about a credential, which only a person may answer"
  if (findSecrets(text).length > 0) return "it carries what looks like a credential"
  return undefined
}

export type ReadAnswer = { answers: string[][] } | { wrong: string; next: string }

/**
 * The parent's `answer` (one string, or one per question) as OpenCode's answers, in the agent's own
 * labels; or what is wrong with it. `shown` is the ask as the parent was shown it (relay-bounds.ts).
 */
export function readAnswer(shown: ShownAsk, answer: string | string[], ask: Ask): ReadAnswer {
  if (shown.ask.kind !== "question" || ask.kind !== "question")
    return { wrong: "This task is not waiting for an answer to a question.", next: "Call task_status." }
  const given = typeof answer === "string" ? [answer] : answer
  const count = shown.ask.questions.length
  if (given.length !== count)
    return {
      wrong: `The task waits for ${count} answer${count === 1 ? "" : "s"}, one per question; got ${given.length}.`,
      next: count === 1 ? "Pass answer as one string." : `Pass answer as a list of ${count} strings, in order.`,
    }
  const answers: string[][] = []
  for (const [index, text] of given.entries()) {
    const question = shown.ask.questions[index]!
    const labels = question.options.map((option) => option.label)
    const where = count === 1 ? "The answer" : `Answer ${index + 1}`
    if (text.trim() === "") return { wrong: `${where} is empty.`, next: "Pass one of the options or a short text." }
    if (text.length > ANSWER_CHARS)
      return { wrong: `${where} has ${text.length} characters (at most ${ANSWER_CHARS}).`, next: "Answer shorter." }
    const free = labels.length === 0 || ask.questions[index]?.custom !== false
    if (!labels.includes(text) && !free)
      return {
        wrong: `${where} "${text.slice(0, 100)}" is not one of the options, and this question takes no free text.`,
        next: `Pass one of: ${labels.map((label) => JSON.stringify(label)).join(", ")}.`,
      }
    answers.push([agentLabel(shown, index, text)])
  }
  // Questions past the form's bound were never shown, so they are left unanswered, as in the form.
  for (let index = count; index < ask.questions.length; index++) answers.push([])
  return { answers }
}
