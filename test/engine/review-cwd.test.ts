// The pure parts of review's cwd form: the diff cut to its bound at a line's end (never mid-line, said
// to be cut), and the brief's fence, which no run of backticks in the diff can close.
import { describe, expect, test } from "bun:test"
import { cwdReviewBrief } from "../../src/engine/review-cwd"
import { boundDiff } from "../../src/workspace/uncommitted"

describe("boundDiff", () => {
  test.each([
    ["under the bound: whole", ["a\n", "b\n"], 10, false, { diff: "a\nb\n", cut: false }],
    ["at the bound exactly: whole", ["abc\n"], 4, false, { diff: "abc\n", cut: false }],
    ["over it: cut at the last line's end", ["one\ntwo\nthree\n"], 9, false, { diff: "one\ntwo\n", cut: true }],
    ["a first line longer than the bound: nothing", ["a long line\n"], 4, false, { diff: "", cut: true }],
    ["under it but a part was cut: said to be cut", ["a\n"], 10, true, { diff: "a\n", cut: true }],
    ["multi-byte text cut between lines, not inside a character", ["é\né\n"], 4, false, { diff: "é\n", cut: true }],
  ] as const)("%s", (_, parts, max, cut, expected) => {
    expect(boundDiff([...parts], max, cut)).toEqual(expected)
  })
})

describe("the cwd review's brief", () => {
  const changes = (diff: string) => ({
    git: true,
    files: [{ path: "calc.ts", change: "modified" as const }],
    diff,
    cut: false,
  })
  test("fences the diff with more backticks than any run inside it", () => {
    const brief = cwdReviewBrief(changes("+const s = `x` + ```y```\n+`````\n"), "Check.")
    expect(brief).toContain("``````diff\n+const s")
    expect(brief).toContain("+`````\n``````\n")
  })

  test("control: a diff without backticks gets the plain three", () => {
    const brief = cwdReviewBrief(changes("+a\n"), "Check.")
    expect(brief).toContain("```diff\n+a\n```\n")
    expect(brief).toContain("- calc.ts (modified)")
    expect(brief).toContain("What the parent asks you to check:\nCheck.")
  })
})
