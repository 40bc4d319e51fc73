// The pure parts of reviewing a patch as what it is: which links need allow_links (resolved the way
// the kernel would), how names are shown, and where a file's sections are in a stored patch read in
// chunks (the same answer as splitting the whole text).
import { expect, test } from "bun:test"
import { writeFile } from "node:fs/promises"
import { blobId } from "../../src/workspace/git-objects"
import { riskyLinks, type EntryAt } from "../../src/workspace/apply/links"
import { hasControl, shownName } from "../../src/workspace/names"
import { editedRanges } from "../../src/workspace/patches/overlap"
import { fileRange, summarize } from "../../src/workspace/patches/patch"
import { fileSections, patchOutline, sectionStarts, sectionStartsOf } from "../../src/workspace/patches/patch-sections"
import type { PatchFile } from "../../src/workspace/patches/patches"
import { tempDir } from "../helpers/temp"

const link = (path: string, target: string, extra: Partial<PatchFile> = {}): PatchFile => ({
  path,
  change: "added",
  additions: 1,
  deletions: 0,
  binary: false,
  newMode: "120000",
  newOid: blobId(target),
  linkTarget: target,
  ...extra,
})
const file = (path: string, extra: Partial<PatchFile> = {}): PatchFile => ({
  path,
  change: "added",
  additions: 1,
  deletions: 0,
  binary: false,
  newMode: "100644",
  newOid: blobId("x"),
  ...extra,
})

/** The repository as it is: README.md, src/ (a directory), old -> src (a link), out -> ../.. (a link). */
const TREE: Record<string, ReturnType<EntryAt>> = {
  "README.md": { kind: "file" },
  src: { kind: "dir" },
  "src/a.ts": { kind: "file" },
  old: { kind: "link", target: "src" },
  out: { kind: "link", target: "../.." },
}
const now: EntryAt = (rel) => TREE[rel]

const CASES: Array<[string, PatchFile[], string, string[]]> = [
  ["a link to a sibling", [link("r", "README.md")], "", []],
  [
    "a link into a subdirectory, and one climbing back from it",
    [link("s", "src/a.ts"), link("src/up", "../README.md")],
    "",
    [],
  ],
  ["a link to the root itself from a subdirectory", [link("src/root", "..")], "", []],
  ["an absolute target", [link("k", "/home/u/.ssh/id_rsa")], "", ["k: it points to an absolute path"]],
  ["a target climbing out", [link("k", "../x")], "", ["k: it points outside the repository"]],
  ["a target climbing out of a workspace below the root stays inside the repository", [link("k", "../x")], "pkg", []],
  ["…but not above the root", [link("k", "../../x")], "pkg", ["k: it points outside the repository"]],
  ["a target into .git", [link("k", "sub/.GIT/hooks")], "", ["k: it points into Git metadata"]],
  [
    "through an existing link whose target climbs out",
    [link("k", "out/x")],
    "",
    ["k: it points outside the repository (through the link out)"],
  ],
  ["through an existing link that stays inside", [link("k", "old/a.ts")], "", []],
  [
    "`..` after a link leaves from the link's target",
    [link("sub/up", ".."), link("esc", "sub/up/../x")],
    "",
    ["esc: it points outside the repository (through the link sub/up)"],
  ],
  [
    "through a link the same patch adds",
    [link("a", "b"), link("b", "../x")],
    "",
    ["a: it points outside the repository (through the link b)", "b: it points outside the repository"],
  ],
  [
    "a cycle",
    [link("a", "b"), link("b", "a")],
    "",
    ["a: it resolves through too many links", "b: it resolves through too many links"],
  ],
  [
    "an existing link the patch deletes no longer counts",
    [
      link("k", "out/x"),
      { ...file("out"), newMode: undefined, newOid: undefined, oldMode: "120000", change: "deleted" },
    ],
    "",
    [],
  ],
  [
    "a file turned into a link",
    [link("README.md", "src/a.ts", { oldMode: "100644", oldOid: blobId("x"), change: "modified" })],
    "",
    ["README.md: it turns a file into a link"],
  ],
  ["a directory replaced by a link", [link("src", "README.md")], "", ["src: it replaces a directory"]],
  [
    "a link whose recorded target is not its blob",
    [link("k", "README.md", { newOid: blobId("elsewhere") })],
    "",
    ["k: its target was not recorded"],
  ],
  [
    "a link with no recorded target",
    [link("k", "README.md", { linkTarget: undefined })],
    "",
    ["k: its target was not recorded"],
  ],
  [
    "a link renamed to where its relative target climbs out",
    [link("src/deep/r", "../../../x", { oldPath: "src/r", change: "renamed" })],
    "",
    ["src/deep/r: it points outside the repository"],
  ],
]

test.each(CASES)("links: %s", (_, files, base, expected) => {
  const nowBelow: EntryAt = (rel) => now(base ? rel.slice(base.length + 1) : rel)
  expect(riskyLinks(files, base, nowBelow).map((finding) => `${finding.path}: ${finding.why}`)).toEqual(expected)
})

test.each([
  ["plain", "src/a.ts", "src/a.ts"],
  ["unicode", "dïr/ünï cödé.txt", "dïr/ünï cödé.txt"],
  ["a newline", "evil\nREADME.md (modified)", '"evil\\u000aREADME.md (modified)"'],
  ["a carriage return and an escape", "a\r\u001b[2Jb", '"a\\u000d\\u001b[2Jb"'],
  ["a bidi override", "invoice\u202Etxt.exe", '"invoice\\u202etxt.exe"'],
  ["a zero-width space and a quote", 'a\u200b"b', '"a\\u200b\\"b"'],
  ["C1 and DEL", "a\u0085b\u007f", '"a\\u0085b\\u007f"'],
])("names: %s is shown as %p", (_, name, shown) => {
  expect(shownName(name)).toBe(shown)
  expect(shownName(name).includes("\n")).toBe(false)
})

test("control characters (not format characters) are refused as names to write", () => {
  expect(["a\nb", "a\tb", "a\u0000", "a\u009b"].map(hasControl)).toEqual([true, true, true, true])
  expect(["ünï", "a\u202eb", "a b"].map(hasControl)).toEqual([false, false, false])
})

test("the summary names every link with its target and escapes every name", () => {
  const summary = summarize([
    link("key", "/home/u/.ssh/id_rsa"),
    file("x\ny (modified)"),
    link("README.md", "a\nb", { oldMode: "100644", change: "modified" }),
  ])
  expect(summary.split("\n")).toEqual([
    "3 files changed, +3 -0",
    "key (added, +1 -0, symlink, → /home/u/.ssh/id_rsa)",
    '"x\\u000ay (modified)" (added, +1 -0)',
    'README.md (modified, +1 -0, file → symlink, → "a\\u000ab")',
  ])
})

test("section offsets read in small chunks match the sections of the whole text, for every chunk edge", async () => {
  await using dir = await tempDir("oc-orch-sections-")
  const sections = [
    "diff --git a/a b/a\n+1\n",
    "diff --git a/b b/b\n-diff --git not a header\n",
    "diff --git a/c b/c\nGIT binary patch\nzdiff --git\n",
    "diff --git a/d b/d\n+x",
  ]
  const text = sections.join("")
  const path = `${dir.path}/p.patch`
  await writeFile(path, text)
  const starts = await sectionStarts(path)
  expect(starts.map((start, index) => text.slice(start, starts[index + 1] ?? text.length))).toEqual(fileSections(text))
  const bytes = Buffer.from(text)
  for (let size = 1; size <= 16; size++) {
    async function* chunks() {
      for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
    }
    expect(await sectionStartsOf(chunks())).toEqual(starts)
  }
  const files = ["a", "b", "c", "d"].map((name) => file(name))
  const third = fileRange(starts, text.length, files, 2)!
  expect(text.slice(third.start, third.end)).toBe(sections[2]!)
  expect(fileRange(starts, text.length, files, 9)).toBeUndefined()
})

test("the streamed outline of a patch gives overlap detection the same ranges as the whole text, at every chunk edge", async () => {
  const long = `+${"x".repeat(5000)}\n`
  const text = [
    "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -3,2 +3,3 @@ ctx\n one\n+two\n",
    `@@ -40 +41,2 @@\n-x\n${long}+diff --git a/fake b/fake\n`,
    "diff --git a/b.bin b/b.bin\nnew file mode 100644\nGIT binary patch\nliteral 3\nKcmZ>\n",
    'diff --git "a/\\303\\274.txt" "b/\\303\\274.txt"\n@@ -1 +1 @@\n-a\n+b',
  ].join("")
  const bytes = Buffer.from(text)
  const whole = editedRanges(text)
  expect([...whole.keys()].length).toBe(3)
  for (const size of [1, 3, 7, 31, 32, 33, 4096, bytes.length]) {
    async function* chunks() {
      for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
    }
    expect(editedRanges(await patchOutline(chunks()))).toEqual(whole)
  }
})
