// What the person is shown for an ask, and how their reply becomes the answer OpenCode receives
// (src/mcp/relay.ts): pure, table-driven.
import { describe, expect, test } from "bun:test"
import { elicitation, verdictOf } from "../../src/mcp/relay"
import type { ElicitResult } from "@modelcontextprotocol/client"
import type { Ask } from "../../src/policy/asks"
import type { Verdict } from "../../src/policy/relay"
import { clip, RELAY_BOUNDS, shownAsk } from "../../src/policy/relay-bounds"

const fetch: Ask = { kind: "permission", permission: "webfetch", patterns: ["https://example.com/a"] }
const questions: Ask = {
  kind: "question",
  questions: [
    {
      question: "Which name?",
      header: "Name",
      options: [
        { label: "countWords", description: "clear" },
        { label: "tally", description: "short" },
      ],
    },
    {
      question: "Which checks?",
      header: "Checks",
      options: [
        { label: "lint", description: "biome" },
        { label: "types", description: "tsc" },
      ],
      multiple: true,
    },
    { question: "Anything else?", header: "Notes", options: [] },
  ],
}

describe("the form", () => {
  test("a permission is one line to accept or decline, with no fields", () => {
    expect(elicitation(fetch)).toEqual({
      mode: "form",
      message:
        "A delegated OpenCode agent asks for webfetch https://example.com/a. Accept to allow it once; decline to refuse.",
      requestedSchema: { type: "object", properties: {} },
    })
  })

  test("each question is a required field: one option, several (multiple), or free text when it offers none", () => {
    const form = elicitation(questions)
    expect(form.message).toBe("A delegated OpenCode agent asks: Which name? / Which checks? / Anything else?")
    expect(form.requestedSchema).toMatchObject({
      required: ["q1", "q2", "q3"],
      properties: {
        q1: { type: "string", title: "Name", enum: ["countWords", "tally"] },
        q2: { type: "array", title: "Checks", items: { type: "string", enum: ["lint", "types"] } },
        q3: { type: "string", title: "Notes" },
      },
    })
    expect((form.requestedSchema.properties.q1 as { description: string }).description).toBe(
      "Which name?\ncountWords: clear\ntally: short",
    )
  })
})

describe("the reply", () => {
  test.each([
    ["accept grants a permission once", fetch, { action: "accept" }, { kind: "granted" }],
    ["decline refuses it", fetch, { action: "decline" }, { kind: "refused", reason: "the person declined" }],
    // A cancel may be the client's own (`codex exec` cancels every form): no one was reached.
    [
      "cancel refuses it, as no one reached",
      fetch,
      { action: "cancel" },
      { kind: "refused", reason: "the person dismissed the ask", unreachable: true },
    ],
    [
      "answers go back in question order, as label lists",
      questions,
      { action: "accept", content: { q1: "tally", q2: ["lint", "types"], q3: "keep it short" } },
      { kind: "answered", answers: [["tally"], ["lint", "types"], ["keep it short"]] },
    ],
    [
      "a question left blank is unanswered",
      questions,
      { action: "accept", content: { q1: "tally", q3: "" } },
      { kind: "answered", answers: [["tally"], [], []] },
    ],
    [
      "accepting with nothing answered refuses",
      questions,
      { action: "accept", content: {} },
      { kind: "refused", reason: "the person accepted without answering" },
    ],
    [
      "declining a question refuses it",
      questions,
      { action: "decline" },
      { kind: "refused", reason: "the person declined" },
    ],
  ] as [string, Ask, ElicitResult, Verdict][])("%s", (_, ask, result, verdict) => {
    expect(verdictOf(ask, result)).toEqual(verdict)
  })
})

describe("the bounds on what a form shows (RELAY_BOUNDS)", () => {
  const big = `Which of these should I pick? ${"a".repeat(300_000)}`
  const huge: Ask = {
    kind: "question",
    questions: [
      {
        question: big,
        header: "H".repeat(500),
        options: [
          { label: "yes", description: "d".repeat(10_000) },
          { label: "no", description: "" },
        ],
      },
    ],
  }

  test("a 300 KB question is clipped to its first 2000 characters, and the form says so; the whole form stays small", () => {
    const form = elicitation(huge)
    expect(JSON.stringify(form).length).toBeLessThan(8_000)
    const q1 = form.requestedSchema.properties.q1 as { title: string; description: string; enum: string[] }
    expect(q1.description).toStartWith(
      `${big.slice(0, RELAY_BOUNDS.questionChars)}… [clipped: ${big.length} characters in all]`,
    )
    expect(q1.title.length).toBeLessThan(RELAY_BOUNDS.headerChars + 40)
    expect(q1.enum).toEqual(["yes", "no"])
    expect(form.message).toContain(
      `Clipped for this form: question 1: ${big.length} characters, the first ${RELAY_BOUNDS.questionChars} shown`,
    )
    expect(form.message.length).toBeLessThan(RELAY_BOUNDS.messageChars + 300)
  })

  test("25 questions in one ask: the first 5 are fields, the rest are left unanswered and the form says so", () => {
    const many: Ask = {
      kind: "question",
      questions: Array.from({ length: 25 }, (_, i) => ({
        question: `Question ${i + 1}?`,
        header: `Q${i + 1}`,
        options: [],
      })),
    }
    const form = elicitation(many)
    expect(Object.keys(form.requestedSchema.properties)).toEqual(["q1", "q2", "q3", "q4", "q5"])
    expect(form.message).toContain("20 more questions not shown (left unanswered)")
    const verdict = verdictOf(many, { action: "accept", content: { q1: "one", q5: "five", q6: "smuggled" } })
    expect(verdict).toEqual({
      kind: "answered",
      answers: [["one"], [], [], [], ["five"], ...Array.from({ length: 20 }, () => [])],
    })
  })

  test("a long option label is shown clipped and answered as the agent's own label; clipped labels that collide stay distinct", () => {
    const label = (n: number) => `${"option ".repeat(40)}${n}`
    const ask: Ask = {
      kind: "question",
      questions: [
        {
          question: "Which?",
          header: "Pick",
          options: [1, 2].map((n) => ({ label: label(n), description: "" })),
          multiple: true,
        },
      ],
    }
    const shown = (elicitation(ask).requestedSchema.properties.q1 as { items: { enum: string[] } }).items.enum
    expect(shown).toHaveLength(2)
    expect(new Set(shown).size).toBe(2)
    for (const value of shown) expect(value.length).toBeLessThan(RELAY_BOUNDS.labelChars + 50)
    expect(verdictOf(ask, { action: "accept", content: { q1: [shown[1]!] } })).toEqual({
      kind: "answered",
      answers: [[label(2)]],
    })
  })

  test("a permission for a 300 KB URL is one clipped line", () => {
    const ask: Ask = {
      kind: "permission",
      permission: "webfetch",
      patterns: [`https://example.com/${"x".repeat(300_000)}`],
    }
    const form = elicitation(ask)
    expect(form.message.length).toBeLessThan(RELAY_BOUNDS.messageChars + 300)
    expect(form.message).toContain("[clipped: ")
  })

  test("control: an ask within the bounds is shown whole, with no clipping note", () => {
    expect(elicitation(questions).message).not.toContain("Clipped")
    expect(shownAsk(questions)).toEqual({
      ask: questions,
      labels: [["countWords", "tally"], ["lint", "types"], []],
      clipped: [],
    })
    expect(clip("short", 10)).toBe("short")
  })
})
