// How much of an ask reaches the person: a delegated agent writes the question, so it can write a
// 300 KB one or 25 at once. The form shows each text up to a documented size and says what it
// clipped; a clipped option label is shown short and mapped back to the agent's own label, so the
// answer the agent receives is one it offered. Pure: an ask in, what to show and how to read back.
import type { Ask, Question } from "./asks"

export const RELAY_BOUNDS = {
  /** Characters of one question's text shown in the form. */
  questionChars: 2000,
  /** Characters of a question's header (the field's title). */
  headerChars: 60,
  /** Characters of an option's label (the value the person picks) and of its description. */
  labelChars: 100,
  descriptionChars: 300,
  /** Options shown per question, and questions per form; the rest are left unanswered. */
  optionsPerQuestion: 10,
  questionsPerAsk: 5,
  /** A permission's patterns (a URL, a search): characters each, and how many. */
  patternChars: 500,
  patternsPerAsk: 5,
  /** Characters of the form's one-line message. */
  messageChars: 1000,
  /** Forms one task may have open at once, and asks waiting behind them; the rest are refused at once. */
  openPerTask: 1,
  waitingPerTask: 4,
  /** Forms open at once in this server, across its tasks; the rest wait their turn. */
  openPerProcess: 4,
  /** Asks one task may put to the person in its life (all its turns in this server). */
  asksPerTask: 20,
} as const

export type RelayBounds = { [key in keyof typeof RELAY_BOUNDS]: number }

/** `text` if it fits, else its first `max` characters and a note of the full length. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text
  // Not half of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max
  return `${text.slice(0, end)}… [clipped: ${text.length} characters in all]`
}

export interface ShownAsk {
  /** The ask as the form shows it. */
  ask: Ask
  /** For each shown question, the agent's label behind each shown option. */
  labels: string[][]
  /** What was clipped or left out, in words for the person; empty when the ask is shown whole. */
  clipped: string[]
}

/** The ask cut to RELAY_BOUNDS, with what was cut. */
export function shownAsk(ask: Ask, bounds: RelayBounds = RELAY_BOUNDS): ShownAsk {
  const clipped: string[] = []
  if (ask.kind === "permission") {
    const patterns = ask.patterns.slice(0, bounds.patternsPerAsk).map((pattern) => clip(pattern, bounds.patternChars))
    if (ask.patterns.length > patterns.length)
      clipped.push(`${ask.patterns.length - patterns.length} more patterns not shown`)
    if (patterns.some((pattern, i) => pattern !== ask.patterns[i]))
      clipped.push(`patterns over ${bounds.patternChars} characters clipped`)
    return { ask: { ...ask, patterns }, labels: [], clipped }
  }
  const questions = ask.questions.slice(0, bounds.questionsPerAsk)
  if (ask.questions.length > questions.length)
    clipped.push(`${ask.questions.length - questions.length} more questions not shown (left unanswered)`)
  const labels: string[][] = []
  const shown = questions.map((question, index): Question => {
    const options = question.options.slice(0, bounds.optionsPerQuestion)
    const where = `question ${index + 1}`
    if (question.options.length > options.length)
      clipped.push(`${where}: ${question.options.length - options.length} more options not shown`)
    if (question.question.length > bounds.questionChars)
      clipped.push(`${where}: ${question.question.length} characters, the first ${bounds.questionChars} shown`)
    const long = options.some(
      (option) => option.label.length > bounds.labelChars || option.description.length > bounds.descriptionChars,
    )
    if (long || question.header.length > bounds.headerChars) clipped.push(`${where}: long options or header clipped`)
    labels.push(options.map((option) => option.label))
    return {
      ...question,
      question: clip(question.question, bounds.questionChars),
      header: clip(question.header, bounds.headerChars),
      options: distinct(options.map((option) => clip(option.label, bounds.labelChars))).map((label, i) => ({
        label,
        description: clip(options[i]!.description, bounds.descriptionChars),
      })),
    }
  })
  return { ask: { kind: "question", questions: shown }, labels, clipped }
}

/** Clipped labels that came out equal are told apart, so every option stays pickable. */
function distinct(labels: string[]): string[] {
  const seen = new Set<string>()
  return labels.map((label) => {
    let unique = label
    for (let n = 2; seen.has(unique); n++) unique = `${label} (${n})`
    seen.add(unique)
    return unique
  })
}

/** A shown label the person picked, as the agent's own label (free text comes back as written). */
export function agentLabel(shown: ShownAsk, question: number, picked: string): string {
  if (shown.ask.kind !== "question") return picked
  const index = shown.ask.questions[question]?.options.findIndex((option) => option.label === picked) ?? -1
  return index >= 0 ? shown.labels[question]![index]! : picked
}
