// The pure half of the sandboxed file tools: the formats and errors OpenCode's built-ins print (so a
// model sees what it would have seen), the edit replacement and the apply_patch grammar.
import { describe, expect, test } from "bun:test"
import {
  applyHunks,
  EditError,
  formatDirectory,
  formatRead,
  parsePatch,
  patchTargets,
  replaceText,
} from "../../plugin/files/text"

describe("read's format", () => {
  test("numbered lines from the offset, with the end-of-file note", () => {
    expect(formatRead("/w/a.txt", "one\ntwo\nthree\n")).toBe(
      "<path>/w/a.txt</path>\n<type>file</type>\n<content>\n1: one\n2: two\n3: three\n\n(End of file - total 3 lines)\n</content>",
    )
    expect(formatRead("/w/a.txt", "one\ntwo\nthree\n", 2, 1)).toContain(
      "2: two\n\n(Showing lines 2-2 of 3. Use offset=3 to continue.)",
    )
  })

  test("long lines are cut, and an offset past the end is an error", () => {
    expect(formatRead("/w/a", `${"x".repeat(2500)}\n`)).toContain("... (line truncated to 2000 chars)")
    expect(() => formatRead("/w/a", "one\n", 5)).toThrow("Offset 5 is out of range for this file (1 lines)")
  })

  test("a directory lists sorted entries and their count", () => {
    expect(formatDirectory("/w", ["b.txt", "a/", ".git/"])).toBe(
      "<path>/w</path>\n<type>directory</type>\n<entries>\n.git/\na/\nb.txt\n\n(3 entries)\n</entries>",
    )
    expect(formatDirectory("/w", ["a", "b", "c"], 1, 2)).toContain(
      "(Showing 2 of 3 entries. Use 'offset' parameter to read beyond entry 2)",
    )
  })
})

describe("edit's replacement", () => {
  test.each([
    ["exact, once", "a\nb\nc\n", "b", "B", false, "a\nB\nc\n"],
    ["every occurrence with replaceAll", "x x x", "x", "y", true, "y y y"],
    [
      "a loose match whose replacement holds $& literally",
      "  a = 1\n  b\n",
      "a = 1\nb",
      "a = '$&'",
      false,
      "a = '$&'\n",
    ],
    [
      "the same lines with other indentation",
      "  if (a) {\n    go()\n  }\n",
      "if (a) {\ngo()\n}",
      "if (b) {\n  stop()\n}",
      false,
      "if (b) {\n  stop()\n}\n",
    ],
  ])("%s", (_, content, oldString, newString, all, expected) => {
    expect(replaceText(content, oldString, newString, all)).toBe(expected)
  })

  test.each([
    ["identical strings", "a", "a", "a", "No changes to apply: oldString and newString are identical."],
    ["not found", "a", "b", "c", "Could not find oldString in the file."],
    ["several matches", "x x", "x", "y", "Found multiple matches for oldString."],
    ["empty oldString", "a", "", "b", "oldString cannot be empty"],
  ])("refuses %s with the built-in's message", (_, content, oldString, newString, message) => {
    expect(() => replaceText(content, oldString, newString)).toThrow(message)
    expect(() => replaceText(content, oldString, newString)).toThrow(EditError)
  })
})

describe("apply_patch", () => {
  const patch = [
    "*** Begin Patch",
    "*** Add File:/w/new.txt",
    "+hello",
    "*** Update File: src/a.ts",
    "*** Move to: src/b.ts",
    "@@",
    " keep",
    "-old",
    "+new",
    "*** Delete File: gone.txt",
    "*** End Patch",
  ].join("\n")

  test("parses every header, with or without a space after the colon", () => {
    const ops = parsePatch(patch)
    expect(ops.map((op) => op.kind)).toEqual(["add", "update", "delete"])
    expect(patchTargets(patch)).toEqual(["/w/new.txt", "src/a.ts", "src/b.ts", "gone.txt"])
    expect(ops[0]).toEqual({ kind: "add", path: "/w/new.txt", content: "hello\n" })
  })

  test("hunks apply by context, tolerate trailing spaces, and refuse what is not there", () => {
    const [, update] = parsePatch(patch)
    if (update?.kind !== "update") throw new Error("expected an update")
    expect(applyHunks("a", "first\nkeep\nold\nlast\n", update.hunks)).toBe("first\nkeep\nnew\nlast\n")
    expect(applyHunks("a", "keep  \nold\n", update.hunks)).toBe("keep\nnew\n")
    expect(() => applyHunks("a", "other\n", update.hunks)).toThrow("does not apply to a")
  })

  test("a hunk of additions only is appended, as OpenCode does", () => {
    const [op] = parsePatch("*** Begin Patch\n*** Update File: a\n@@\n+tail\n*** End Patch")
    if (op?.kind !== "update") throw new Error("expected an update")
    expect(applyHunks("a", "one\ntwo\n", op.hunks)).toBe("one\ntwo\ntail\n")
  })

  test("a patch without its envelope is refused", () => {
    expect(() => parsePatch("*** Add File: a\n+x")).toThrow("*** Begin Patch")
  })
})
