// The open asks a task record keeps (opencode/pending.ts) are read whatever was written there: a
// garbage `asks` value or entry is no ask, never a reason a takeover or a shutdown fails.
import { expect, test } from "bun:test"
import { knownAsks } from "../../src/opencode/pending"

const ask = { id: "per_1", kind: "permission", sessionID: "ses_1", what: "webfetch https://x" }

test.each([
  ["absent", undefined, []],
  ["a string", "per_1", []],
  ["an object", { 0: ask }, []],
  ["null entries and numbers", [null, 3, ask], [ask]],
  ["an unknown kind", [{ ...ask, kind: "shell" }], []],
  ["an empty id", [{ ...ask, id: "" }], []],
  ["a question count that is not a count", [{ ...ask, kind: "question", questions: -1 }], []],
  [
    "well formed",
    [ask, { ...ask, id: "que_1", kind: "question", questions: 2 }],
    [ask, { ...ask, id: "que_1", kind: "question", questions: 2 }],
  ],
])("a record's asks, %s", (_, value, expected) => {
  expect(knownAsks(value)).toEqual(expected as ReturnType<typeof knownAsks>)
})
