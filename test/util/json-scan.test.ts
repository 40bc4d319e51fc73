// The iterative JSON scanner on the worst inputs a model could write: nesting far past any stack,
// megabyte strings, numbers of half a million digits, objects of a hundred thousand keys. Each answer is
// checked for what it says (where the value ends, how deep it went, which rule stopped it), never for
// how long it took; the bench measures that. Controls: the recursive reader it replaced overflows on the
// same nesting, and without the depth bound the deep value is read whole.
import { describe, expect, test } from "bun:test"
import { type JsonProblem, scanJson } from "../../src/util/json-scan"

const MIB = 1_048_576
const keys = (count: number, last = "") =>
  `{${Array.from({ length: count }, (_, i) => `"k${i}":${i}`).join(",")}${last}}`

describe("scanJson", () => {
  test.each([
    ["a scalar", "42", 2, 0],
    ["an empty object", "{}", 2, 1],
    ["nested containers", '{"a":[1,{"b":[]}]}', 18, 4],
    ["a value followed by prose", '{"a":1} and more', 7, 1],
    ["a megabyte string of escapes", `"${"\\\\".repeat(MIB / 2)}"`, MIB + 2, 0],
    ["a hundred thousand items", `[${"1,".repeat(100_000)}1]`, 200_003, 1],
    ["a hundred thousand distinct keys", keys(100_000), keys(100_000).length, 1],
    ["a decimal of half a million zeros then one digit", `0.${"0".repeat(500_000)}1`, 500_003, 0],
    ["64 levels, the bound itself", `${"[".repeat(64)}${"]".repeat(64)}`, 128, 64],
  ])("reads %s", (_, text, end, depth) => {
    expect(scanJson(text, { exact: true, maxDepth: 64 })).toEqual({ ok: true, end, depth })
  })

  test.each<[string, string, JsonProblem, number]>([
    ["a megabyte of openings", "[".repeat(MIB), "depth", 64],
    ["a megabyte of object openings", '{"a":'.repeat(MIB / 5), "depth", 64 * 5],
    ["100,000 levels closed", `${"[".repeat(100_000)}${"]".repeat(100_000)}`, "depth", 64],
    ["a key twice after a hundred thousand others", keys(100_000, ',"k7":1'), "key twice", keys(100_000).length],
    ["an integer past 2^53", "[9007199254740993]", "inexact number", 1],
    ["a decimal of half a million digits", `0.${"1".repeat(500_000)}`, "inexact number", 0],
    ["a string that never closes", `"${"a".repeat(MIB)}`, "syntax", MIB + 1],
    ["a bad escape", '"\\x"', "syntax", 1],
    ["a bare word", "[1, yes]", "syntax", 4],
    ["a missing comma", '{"a":1 "b":2}', "syntax", 7],
    ["a trailing comma", "[1,]", "syntax", 3],
  ])("refuses %s", (_, text, problem, at) => {
    const got = scanJson(text, { exact: true, maxDepth: 64 })
    expect(got.ok).toBe(false)
    if (!got.ok) expect([got.problem, got.at]).toEqual([problem, at])
  })

  test("without exact, a key twice and an inexact number are JSON like any other", () => {
    expect(scanJson('{"a":9007199254740993,"a":1}').ok).toBe(true)
  })

  test("control: without the bound, 100,000 levels are read whole, on an array, not the stack", () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`
    expect(scanJson(deep)).toEqual({ ok: true, end: 200_000, depth: 100_000 })
  })

  test("control: a recursive reader (as json-exact.ts was) overflows the stack on the same nesting", () => {
    const depth = (text: string, at: number): number => (text[at] === "[" ? 1 + depth(text, at + 1) : 0)
    expect(() => depth("[".repeat(100_000), 0)).toThrow(RangeError)
  })
})
