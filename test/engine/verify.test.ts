// The verification's pure core: which commands are refused, and how a check's outcome changes a result
// (a pass keeps the agent's status, anything else makes succeeded needs_review; a changed definition
// or one that could not be held makes it needs_review, said first), and which files are the check's
// definition (a file the command names is, one it merely contains as a substring is not).
import { describe, expect, test } from "bun:test"
import { fromTranscript } from "../../src/engine/outcome/result"
import { applyVerification, checkVerify } from "../../src/engine/outcome/verify"
import type { Verification } from "../../src/engine/records/record-schema"
import { checkFrozenGlobs, definitionMatcher, namesPath } from "../../src/workspace/snapshot/definitions"

const base = (status: "succeeded" | "needs_review", files: string[] = []) => ({
  ...fromTranscript({ role: "worker", workspace: "/w", durationMs: 1, status }),
  files: files.map((path) => ({ path, change: "modified" as const })),
})
const check = (exitCode: number | null, command = "bun test ./a.test.ts"): Verification => ({
  command,
  exitCode,
  durationMs: 5,
  digest: "exit code: …",
})

describe("checkVerify", () => {
  test.each([
    ["bun test ./a.test.ts && bun run lint", undefined],
    ["", "verify is empty"],
    ["   ", "verify is empty"],
    ["bun test\nrm -rf .", "control character"],
    ["bun\ttest", "control character"],
    ["bun test \u001b[31m", "control character"],
    ["x".repeat(1001), "over the limit of 1000"],
  ])("%p", (command, problem) => {
    if (!problem) return expect(() => checkVerify(command)).not.toThrow()
    expect(() => checkVerify(command)).toThrow(problem)
  })
  test("no verify passes", () => expect(() => checkVerify(undefined)).not.toThrow())
})

describe("applyVerification", () => {
  test("a pass keeps succeeded and needs_review as they were, with no warning", () => {
    for (const status of ["succeeded", "needs_review"] as const) {
      const result = base(status)
      applyVerification(result, check(0))
      expect(result.status).toBe(status)
      expect(result.warnings).toBeUndefined()
      expect(result.verification?.exitCode).toBe(0)
    }
  })
  test.each([
    [1, "exited 1"],
    [null, "did not complete"],
  ])("exit %p makes succeeded needs_review, the reason first", (code, reason) => {
    const result = { ...base("succeeded"), warnings: ["planted"], next: "Review the patch." }
    applyVerification(result, check(code))
    expect(result.status).toBe("needs_review")
    expect(result.warnings[0]).toContain(reason)
    expect(result.warnings[1]).toBe("planted")
    expect(result.next).toStartWith("The verification command")
    expect(result.next).toEndWith("Review the patch.")
  })
  test("a changed definition makes succeeded needs_review, naming the files and the run as left, said first", () => {
    const result = base("succeeded")
    applyVerification(result, {
      ...check(1),
      definitionChanged: ["Makefile", "tally.test.ts"],
      asLeft: { exitCode: 0, durationMs: 5, digest: "" },
    })
    expect(result.status).toBe("needs_review")
    const [first, second] = result.warnings ?? []
    expect(first).toContain("changed the check's definition (Makefile, tally.test.ts)")
    expect(first).toContain("the command exited 0 (verification.as_left)")
    expect(second).toContain("exited 1")
  })
  test("a definition that could not be held makes even a pass needs_review; an untouched one says nothing", () => {
    const unheld = base("succeeded")
    applyVerification(unheld, { ...check(0), unfrozen: "its archive is missing or damaged" })
    expect(unheld.status).toBe("needs_review")
    expect(unheld.warnings).toEqual([expect.stringContaining("could not be held as it was before the worker")])
    const untouched = base("succeeded")
    applyVerification(untouched, { ...check(0), definitionChanged: [] })
    expect(untouched.status).toBe("succeeded")
    expect(untouched.warnings).toBeUndefined()
  })
})

describe("the check's definition", () => {
  const isDefinition = definitionMatcher({
    command: "bun test ./a.test.ts && bash scripts/check.sh",
    globs: ["fixtures/**"],
  })
  test.each([
    "Makefile",
    "sub/GNUmakefile",
    "rules.mk",
    "package.json",
    "packages/x/package.json",
    "conftest.py",
    "pyproject.toml",
    "setup.cfg",
    "tsconfig.build.json",
    "bunfig.toml",
    "jest.config.ts",
    "vitest.config.mts",
    "x_test.go",
    "src/a.spec.ts",
    "test_tally.py",
    "test/helpers/world.ts",
    "src/__tests__/a.ts",
    ".github/workflows/ci.yml",
    ".gitlab-ci.yml",
    "Cargo.toml",
    "go.mod",
    "scripts/check.sh",
    "fixtures/sum.txt",
  ])("%s is part of it", (path) => expect(isDefinition(path)).toBe(true))
  test.each(["src/tally.ts", "README.md", "scripts/other.sh", "latest.ts", "contest.py", "src/testing.ts"])(
    "%s is not",
    (path) => expect(isDefinition(path)).toBe(false),
  )
  test("a file the command names counts; one it only contains as a substring does not", () => {
    expect(namesPath("bun test ./a.test.ts", "a.test.ts")).toBe(true)
    expect(namesPath("bun test src/a.test.ts", "src/a.test.ts")).toBe(true)
    expect(namesPath("bun test ./a.test.ts", "test.ts")).toBe(false)
    expect(namesPath("bun test ./a.test.ts", "a.test")).toBe(false)
  })
  test("a file only an inspecting program reads is the work, not the check; what anything else reads is the check", () => {
    // A worker graded by `grep -q fixed src/a.ts` is asked to change src/a.ts: the check looks at the work.
    expect(namesPath("grep -q 'n = 1' src/tally.ts", "src/tally.ts")).toBe(false)
    expect(namesPath("FOO=1 timeout -s KILL 30 rg fixed src/a.ts", "src/a.ts")).toBe(false)
    expect(namesPath("test -f out.txt && cat out.txt", "out.txt")).toBe(false)
    // Controls: a script the command runs, a golden file diff compares with, a runner's operand.
    expect(namesPath("grep -q x src/a.ts && bash scripts/check.sh", "scripts/check.sh")).toBe(true)
    expect(namesPath("grep x src/a.ts | ./scripts/check.sh", "scripts/check.sh")).toBe(true)
    expect(namesPath("diff golden.txt out.txt", "golden.txt")).toBe(true)
    expect(namesPath("env CI=1 bun test ./a.test.ts", "a.test.ts")).toBe(true)
    // A name both inspected and run is run: the check.
    expect(namesPath("cat run.sh; sh run.sh", "run.sh")).toBe(true)
  })
  test("verify_frozen entries that are empty, absolute, climbing or too many are refused", () => {
    expect(() => checkFrozenGlobs(["fixtures/**", "golden.txt"])).not.toThrow()
    for (const bad of [[""], ["/etc/x"], ["../x"], ["a/../../x"], Array.from({ length: 33 }, (_, i) => `f${i}`)])
      expect(() => checkFrozenGlobs(bad)).toThrow("verify_frozen")
  })
})
