// The pure parts of review's cwd form: the diff cut to its bound at a line's end (never mid-line, said
// to be cut), the brief's fence, which no run of backticks in the diff can close, and a record whose
// `reviewed` is garbage failing its schema (so it is set aside, never read as what was reviewed).
import { describe, expect, test } from "bun:test"
import { RecordSchema } from "../../src/engine/records/record-schema"
import { cwdReviewBrief } from "../../src/engine/review-cwd"
import { boundDiff } from "../../src/workspace/snapshot/uncommitted"
import { sampleRecord } from "./_records"

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

describe("a record's reviewed", () => {
  const cwd = { cwd: "/w", files: [{ path: "calc.ts", change: "modified" }], more: 2 }
  test("a patch's or a cwd's parses", () => {
    expect(RecordSchema.safeParse(sampleRecord({ reviewed: { patchId: "patch_a_1" } })).success).toBe(true)
    expect(RecordSchema.safeParse({ ...sampleRecord(), reviewed: cwd }).success).toBe(true)
  })

  test.each([
    ["a string", "calc.ts"],
    ["a file without its change", { cwd: "/w", files: [{ path: "calc.ts" }] }],
    ["a change git never reports", { cwd: "/w", files: [{ path: "calc.ts", change: "copied" }] }],
    ["a negative count", { ...cwd, more: -1 }],
  ])("garbage fails the schema: %s", (_, reviewed) => {
    expect(RecordSchema.safeParse({ ...sampleRecord(), reviewed }).success).toBe(false)
  })
})
