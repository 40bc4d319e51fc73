// Which questions may wait for the parent's task_respond, and how its answer is read: a question about
// a credential (however it is spelled) never waits, an ordinary one does; an answer must be an option,
// or free text only for a question without options, and bounded. Pure, table-driven.
import { describe, expect, test } from "bun:test"
import type { Ask } from "../../src/policy/asks"
import { shownAsk } from "../../src/policy/relay-bounds"
import { ANSWER_CHARS, notForParent, readAnswer } from "../../src/policy/relay-respond"

const ask = (question: string, labels: string[] = [], header = "Q"): Ask => ({
  kind: "question",
  questions: [{ question, header, options: labels.map((label) => ({ label, description: "" })) }],
})

describe("a question about a credential never waits for the parent", () => {
  const credential = [
    "What is the database password?",
    "Please paste the API key for the billing service.",
    "What's the GITHUB token I should use?",
    "Enter the 2FA code sent to your phone.",
    "What is the passphrase of the deploy ssh key?",
    "Which access key should the uploader use?",
    "Give me the one-time code.",
    "What is the seed phrase of the wallet?",
    "Paste the session cookie from your browser.",
    "What are the login details?",
    // Fullwidth letters and a zero-width space, folded as the secret guard folds them.
    "What is the ｐａｓｓｗｏｒｄ?",
    "What is the pass\u200bword?",
    // A Cyrillic а inside a Latin word.
    "What is the p\u0430ssword for staging?",
    // A question carrying a credential asks the parent to confirm it.
    "Is ghp_0123456789abcdefABCDEF0123456789abcd the right one?",
  ]
  for (const question of credential) test(question, () => expect(notForParent(ask(question))).toBeDefined())
  test("an option that asks for it counts too", () =>
    expect(notForParent(ask("How should I go on?", ["use my own token", "skip"]))).toBeDefined())

  const ordinary = [
    "Which name should the counting function get?",
    "Should the tokenizer keep punctuation?",
    "Should I raise max_tokens to 4000 for the summary step?",
    "Which directory holds the fixtures?",
    "Should I pin the dependency to 1.2?",
    "Keep the old API or switch to the new one?",
  ]
  for (const question of ordinary)
    test(`control: ${question}`, () => expect(notForParent(ask(question))).toBeUndefined())

  test("an ask of several questions waits for none (task_respond answers one)", () => {
    const question = { question: "b?", header: "B", options: [] }
    expect(notForParent({ kind: "question", questions: [question, question] })).toContain("2 questions at once")
  })
})

describe("the parent's answer", () => {
  const choice = ask("Which name?", ["countWords", "tally"])
  const read = (target: Ask, answer: string) => readAnswer(shownAsk(target), answer, target)

  test("an option is the agent's own label", () => expect(read(choice, "tally")).toEqual({ answers: [["tally"]] }))
  test("a clipped label is answered as the agent wrote it", () => {
    const long = "n".repeat(150)
    const target = ask("Which?", [long, "short"])
    const shown = shownAsk(target)
    const label = shown.ask.kind === "question" ? shown.ask.questions[0]!.options[0]!.label : ""
    expect(readAnswer(shown, label, target)).toEqual({ answers: [[long]] })
  })
  for (const [answer, wrong] of [
    ["camelCase", "is not one of the options"],
    ["", "is empty"],
    ["   ", "is empty"],
    ["x".repeat(ANSWER_CHARS + 1), `at most ${ANSWER_CHARS}`],
  ] as const)
    test(`refused: ${JSON.stringify(answer.slice(0, 12))}`, () => {
      const result = read(choice, answer)
      expect(result).toMatchObject({ wrong: expect.stringContaining(wrong), next: expect.any(String) })
    })
  test("free text is taken for a question without options", () =>
    expect(read(ask("What name?"), "countWordsInText")).toEqual({ answers: [["countWordsInText"]] }))
  test("control: free text for a question with options is refused, naming them", () =>
    expect(read(choice, "countWordsInText")).toMatchObject({ next: 'Pass one of: "countWords", "tally".' }))
})
