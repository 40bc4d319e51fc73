// What the person is shown for an ask, and how their reply becomes the answer OpenCode receives
// (src/mcp/relay.ts): pure, table-driven.
import { describe, expect, test } from "bun:test"
import { elicitation, verdictOf } from "../../src/mcp/relay"
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import type { Ask, Verdict } from "../../src/policy/relay"

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
      message: "A delegated OpenCode agent asks for webfetch https://example.com/a. Accept to allow it once; decline to refuse.",
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
    expect((form.requestedSchema.properties.q1 as { description: string }).description).toBe("Which name?\ncountWords: clear\ntally: short")
  })
})

describe("the reply", () => {
  test.each([
    ["accept grants a permission once", fetch, { action: "accept" }, { kind: "granted" }],
    ["decline refuses it", fetch, { action: "decline" }, { kind: "refused", reason: "the person declined" }],
    ["cancel refuses it", fetch, { action: "cancel" }, { kind: "refused", reason: "the person dismissed the ask" }],
    [
      "answers go back in question order, as label lists",
      questions,
      { action: "accept", content: { q1: "tally", q2: ["lint", "types"], q3: "keep it short" } },
      { kind: "answered", answers: [["tally"], ["lint", "types"], ["keep it short"]] },
    ],
    ["a question left blank is unanswered", questions, { action: "accept", content: { q1: "tally", q3: "" } }, { kind: "answered", answers: [["tally"], [], []] }],
    ["accepting with nothing answered refuses", questions, { action: "accept", content: {} }, { kind: "refused", reason: "the person accepted without answering" }],
    ["declining a question refuses it", questions, { action: "decline" }, { kind: "refused", reason: "the person declined" }],
  ] as [string, Ask, ElicitResult, Verdict][])("%s", (_, ask, result, verdict) => {
    expect(verdictOf(ask, result)).toEqual(verdict)
  })
})
