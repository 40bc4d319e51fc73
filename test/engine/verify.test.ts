// The verification's pure core: which commands are refused, and how a check's outcome changes a result
// (a pass keeps the agent's status, anything else makes succeeded needs_review; a changed file the
// command names is flagged, a file it merely contains as a substring is not).
import { describe, expect, test } from "bun:test"
import { fromTranscript } from "../../src/engine/result"
import { applyVerification, checkVerify, type Verification } from "../../src/engine/verify"

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
  test("a changed file the command names is flagged; one it only contains as a substring is not", () => {
    const named = base("succeeded", ["a.test.ts", "src/x.ts"])
    applyVerification(named, check(0))
    expect(named.warnings).toEqual([expect.stringContaining("changed a.test.ts, which the verification")])
    const other = base("succeeded", ["test.ts", "a.test"])
    applyVerification(other, check(0))
    expect(other.warnings).toBeUndefined()
  })
})
