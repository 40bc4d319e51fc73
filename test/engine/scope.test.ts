// A scoped worker's result judged against its scope (src/engine/outcome/scope.ts), as a table: what becomes of
// status, out_of_scope, warnings and next for each way a turn can end.
import { describe, expect, test } from "bun:test"
import { fromTranscript } from "../../src/engine/outcome/result"
import type { DelegationResult } from "../../src/engine/records/record-schema"
import type { Status } from "../../src/engine/records/status"
import { applyScope, type ScopeFacts } from "../../src/engine/outcome/scope"
import type { FileChange } from "../../src/workspace/snapshot/changes"

const result = (status: Status, files?: FileChange[]): DelegationResult => ({
  ...fromTranscript({ role: "worker", workspace: "/srv/p", taskID: "task_1", durationMs: 1, status }),
  files,
})
const changed = (...paths: string[]) => paths.map((path): FileChange => ({ path, change: "modified" }))
const inPlace = (scope: string[]): ScopeFacts => ({ scope, isolated: false })

const CASES: Array<[string, DelegationResult, ScopeFacts, Status, string[] | undefined]> = [
  ["all inside: unchanged", result("succeeded", changed("src/a.ts")), inPlace(["src/**"]), "succeeded", undefined],
  ["nothing changed", result("succeeded", []), inPlace(["src/**"]), "succeeded", undefined],
  ["one outside", result("succeeded", changed("src/a.ts", "b.ts")), inPlace(["src/**"]), "needs_review", ["b.ts"]],
  ["outside, the turn failed", result("failed", changed("b.ts")), inPlace(["src/**"]), "failed", ["b.ts"]],
  ["outside, timed out", result("timed_out", changed("b.ts")), inPlace(["src"]), "timed_out", ["b.ts"]],
  ["not measured (no git)", result("succeeded"), inPlace(["src/**"]), "needs_review", undefined],
  [
    "isolated, none left out",
    result("succeeded"),
    { scope: ["src"], isolated: true, leftOut: [] },
    "succeeded",
    undefined,
  ],
  [
    "isolated, left out",
    result("succeeded"),
    { scope: ["src"], isolated: true, leftOut: ["x"] },
    "needs_review",
    ["x"],
  ],
  ["isolated, not collected", result("succeeded"), { scope: ["src"], isolated: true }, "needs_review", undefined],
  // What changed on disk (ignored files included) beside what git names; a directory by its own path.
  [
    "on disk: an ignored file and a directory outside, the scope's own inside",
    result("succeeded", changed("src/a.ts", "README.md")),
    { ...inPlace(["src/**"]), disk: { paths: [".env", "README.md", "cache/", "src/a.ts", "src/gen/"] } },
    "needs_review",
    [".env", "README.md", "cache/"],
  ],
  [
    "on disk: nothing outside",
    result("succeeded", changed("src/a.ts")),
    { ...inPlace(["src/**"]), disk: { paths: ["src/a.ts"] } },
    "succeeded",
    undefined,
  ],
  [
    "on disk: a walk cut short fails closed",
    result("succeeded", changed("src/a.ts")),
    { ...inPlace(["src/**"]), disk: { paths: [], incomplete: "the walk took over 60s and was stopped" } },
    "needs_review",
    undefined,
  ],
]

describe("applyScope", () => {
  for (const [name, given, facts, status, outside] of CASES)
    test(name, () => {
      const was = given.status
      applyScope(given, facts)
      expect(given.status).toBe(status)
      expect(given.outOfScope).toEqual(outside)
      // Nothing outside and nothing unmeasured: the result is left exactly as it was.
      if (outside === undefined && status === was) expect(given.warnings).toBeUndefined()
      for (const path of outside ?? []) {
        expect(given.warnings?.[0]).toContain(path)
        expect(given.next).toContain(path)
      }
    })

  test("in place the files are said to stay in the workspace; isolated, to be left out of the patch", () => {
    const here = result("succeeded", changed("b.ts"))
    applyScope(here, inPlace(["src"]))
    expect(here.next).toContain("stay in the workspace")
    const there = result("succeeded")
    applyScope(there, { scope: ["src"], isolated: true, leftOut: ["b.ts"] })
    expect(there.next).toContain("left out of the patch")
  })

  test("a disk walk cut short says why, and still names what it saw", () => {
    const cut = result("succeeded", changed("src/a.ts"))
    applyScope(cut, { ...inPlace(["src/**"]), disk: { paths: [".env"], incomplete: "more than 4 bytes" } })
    expect(cut.outOfScope).toEqual([".env"])
    expect(cut.warnings?.join("\n")).toContain("could not all be compared: more than 4 bytes")
  })

  test("an unmeasured change says why, first in warnings", () => {
    const unmeasured = result("succeeded")
    applyScope(unmeasured, inPlace(["src"]))
    expect(unmeasured.warnings?.[0]).toContain("could not be checked against its scope")
  })
})
