import { expect, test } from "bun:test"
import { editedRanges, overlaps } from "../../src/workspace/patches/overlap"

const hunk = (path: string, oldStart: number, oldCount: number) =>
  `diff --git a/${path} b/${path}\nindex 1111111..2222222 100644\n--- a/${path}\n+++ b/${path}\n@@ -${oldStart},${oldCount} +${oldStart},${oldCount} @@\n-old\n+new\n`

test.each([
  ["different files", [hunk("a.ts", 1, 3)], [hunk("b.ts", 1, 3)], []],
  ["same file, far apart", [hunk("a.ts", 1, 4)], [hunk("a.ts", 40, 4)], []],
  ["same file, same lines", [hunk("a.ts", 10, 4)], [hunk("a.ts", 12, 4)], ["a.ts"]],
  ["same file, adjacent hunks", [hunk("a.ts", 10, 4)], [hunk("a.ts", 14, 4)], ["a.ts"]],
  [
    "both add the file",
    ["diff --git a/n.ts b/n.ts\nnew file mode 100644\n--- /dev/null\n+++ b/n.ts\n@@ -0,0 +1 @@\n+x\n"],
    ["diff --git a/n.ts b/n.ts\nnew file mode 100644\n--- /dev/null\n+++ b/n.ts\n@@ -0,0 +1 @@\n+y\n"],
    ["n.ts"],
  ],
  [
    "a rename against an edit of the old name",
    ["diff --git a/old.ts b/new.ts\nsimilarity index 90%\nrename from old.ts\nrename to new.ts\n"],
    [hunk("old.ts", 50, 2)],
    ["old.ts"],
  ],
  [
    "binary on both sides",
    ["diff --git a/i.bin b/i.bin\nindex 1..2 100644\nGIT binary patch\nliteral 1\n"],
    ["diff --git a/i.bin b/i.bin\nindex 1..3 100644\nGIT binary patch\nliteral 2\n"],
    ["i.bin"],
  ],
])("%s", (_, left, right, expected) => {
  const found = overlaps([
    { owner: "task_l", text: left.join("") },
    { owner: "task_r", text: right.join("") },
  ])
  expect(found.map((overlap) => overlap.path)).toEqual(expected)
  for (const overlap of found) expect(overlap.owners.sort()).toEqual(["task_l", "task_r"])
})

test("a pure insertion touches the line it follows; several hunks of one file are all kept", () => {
  const ranges = editedRanges(`${hunk("a.ts", 5, 0)}@@ -20,3 +20,4 @@\n ctx\n+new\n`)
  expect(ranges.get("a.ts")).toEqual([
    [5, 6],
    [20, 23],
  ])
})
