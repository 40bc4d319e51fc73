// What changed on disk since a turn began, every file counted: the pure parts table-driven (what the walk
// skips as wholly in scope, how a removal is named by its directory), then the walk itself in the real
// sandbox on a real tree. Controls: what changed before the moment is not named; git's status alone
// never lists the ignored file the walk names; a cut output says the answer is incomplete. Swapped path: a
// link made during the turn is named, never followed. Garbage: a record's start time missing or in the
// future makes the answer incomplete (needs_review), never an empty list.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs"
import { measureEvidence } from "../../src/engine/outcome/evidence"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import type { HostContext } from "../../src/sandbox"
import { changedFiles, snapshot } from "../../src/workspace/snapshot/changes"
import { changedPaths, clockPast, diskChangesSince, scopePrunes } from "../../src/workspace/snapshot/disk-changes"
import { commitRepo } from "../helpers/git"

describe("scopePrunes", () => {
  const rows: [string[], string[]][] = [
    [["src/**"], ["./src/*"]],
    [["src"], ["./src"]],
    [
      ["notes.md", "docs/"],
      ["./notes.md", "./docs"],
    ],
    [["**"], ["./*"]],
    // Wildcards elsewhere are filtered after the walk, never pruned wider than the scope.
    [["test/*.test.ts", "**/*.md", "a/*/b/**"], []],
    // A literal name is not a find pattern.
    [["we[ir]d/**"], ["./we\\[ir\\]d/*"]],
  ]
  for (const [scope, prunes] of rows) test(JSON.stringify(scope), () => expect(scopePrunes(scope)).toEqual(prunes))
})

describe("changedPaths", () => {
  const out = (...records: string[]) => records.map((record) => `${record}\0`).join("")
  test("files are named; a directory only when nothing in it is", () => {
    expect(changedPaths(out("d ", "f .env", "d cache", "d src", "f src/new.ts", "l src/link"))).toEqual([
      ".env",
      "cache/",
      "src/link",
      "src/new.ts",
    ])
  })
  test("the workspace itself, changed with nothing in it changed, is ./", () => {
    expect(changedPaths(out("d "))).toEqual(["./"])
  })
  test("a path with a newline or spaces stays one path (records end in NUL)", () => {
    expect(changedPaths(out("f a b\nc", "d x"))).toEqual(["a b\nc", "x/"])
  })
})

describe("diskChangesSince in the sandbox", () => {
  let root = ""
  let ws = ""
  let host: HostContext
  beforeAll(async () => {
    root = mkdtempSync("/tmp/orch-disk-changes-")
    ws = `${root}/ws`
    mkdirSync(`${root}/home`)
    mkdirSync(ws)
    host = { home: `${root}/home`, path: "/usr/bin:/bin", trustedRoots: [], credentials: [] }
    await commitRepo(ws, { "README.md": "# r\n", ".gitignore": ".env\ncache/\n", "src/keep.ts": "k\n" })
    writeFileSync(`${ws}/.env`, "SECRET=1\n")
    mkdirSync(`${ws}/cache`)
    writeFileSync(`${ws}/cache/old.bin`, "old\n")
    writeFileSync(`${ws}/before.txt`, "before\n")
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  test("names the tracked, the ignored and the removed; not what changed before, nor what the scope covers", async () => {
    // Written the moment before the snapshot: not the turn's.
    writeFileSync(`${ws}/before.txt`, "again\n")
    const git = await snapshot(ws, host)
    const sinceMs = git.since!
    await clockPast(sinceMs)
    writeFileSync(`${ws}/README.md`, "pwned\n")
    writeFileSync(`${ws}/.env`, "SECRET=pwned\n")
    unlinkSync(`${ws}/cache/old.bin`)
    writeFileSync(`${ws}/src/new.ts`, "in scope\n")
    symlinkSync("../README.md", `${ws}/src/readme`)
    writeFileSync(`${ws}/.git/description`, "git's own\n")
    const found = await diskChangesSince(ws, host, { sinceMs, scope: ["src/**"] })
    expect(found).toEqual({ paths: [".env", "README.md", "cache/", "src/new.ts", "src/readme"] })
    // Control: git's status names the tracked file and the new ones, never the ignored two.
    const paths = changedFiles(git, await snapshot(ws, host, git.repository)).map((change) => change.path)
    expect(paths).toContain("README.md")
    expect(paths).not.toContain(".env")
    expect(paths.some((path) => path.startsWith("cache"))).toBe(false)
  }, 30_000)

  test("a scope wholly covering a directory keeps the walk out of it; its own change is explained", async () => {
    const sinceMs = Date.now()
    await clockPast(sinceMs)
    mkdirSync(`${ws}/gen/deep`, { recursive: true })
    for (let i = 0; i < 50; i++) writeFileSync(`${ws}/gen/deep/f${i}`, "x")
    const found = await diskChangesSince(ws, host, { sinceMs, scope: ["gen/**"] })
    // gen/deep is printed and not entered (it is under gen/**, so the caller's filter drops it); the root and
    // gen are explained by what was printed in them.
    expect(found).toEqual({ paths: ["gen/deep/"] })
  }, 30_000)

  test("an output past its bound says the answer is incomplete, keeping what it saw", async () => {
    const sinceMs = Date.now()
    await clockPast(sinceMs)
    mkdirSync(`${ws}/many`)
    for (let i = 0; i < 40; i++) writeFileSync(`${ws}/many/file-${i}`, "x")
    const found = await diskChangesSince(ws, host, {
      sinceMs,
      scope: ["src/**"],
      limits: { timeoutMs: 30_000, maxOutputBytes: 200 },
    })
    expect(found.incomplete).toContain("more than 200 bytes")
    expect(found.paths.length).toBeGreaterThan(0)
    expect(found.paths.length).toBeLessThan(40)
    // Control: the same walk within its bound is complete.
    const whole = await diskChangesSince(ws, host, { sinceMs, scope: ["src/**"] })
    expect(whole.incomplete).toBeUndefined()
    expect(whole.paths.filter((path) => path.startsWith("many/")).length).toBe(40)
  }, 30_000)

  test("a link made during the turn is named itself; the walk never follows it out of the workspace", async () => {
    mkdirSync(`${root}/outside`, { recursive: true })
    const sinceMs = Date.now()
    await clockPast(sinceMs)
    writeFileSync(`${root}/outside/theirs.txt`, "x")
    symlinkSync(`${root}/outside`, `${ws}/out`)
    const found = await diskChangesSince(ws, host, { sinceMs, scope: ["src/**"] })
    expect(found.paths).toContain("out")
    expect(found.paths.some((path) => path.includes("theirs"))).toBe(false)
  }, 30_000)

  test("a record whose start time is missing or in the future is not believed: the answer is incomplete", async () => {
    const record = (since: number | undefined) =>
      ({
        role: "worker",
        workspace: ws,
        writable: false,
        sessions: [],
        scope: ["src/**"],
        snapshot: { git: false, entries: {}, since },
      }) as unknown as TaskRecord
    for (const since of [undefined, Date.now() + 3_600_000]) {
      const { disk } = await measureEvidence(record(since), undefined, `${root}/runs`, host)
      expect(disk?.incomplete).toBe("the turn's start time was not recorded")
    }
    // Control: a start in the past is walked.
    const { disk } = await measureEvidence(record(Date.now() - 1000), undefined, `${root}/runs`, host)
    expect(disk?.incomplete).toBeUndefined()
  }, 30_000)
})
