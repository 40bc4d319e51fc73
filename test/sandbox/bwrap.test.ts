import { describe, expect, test } from "bun:test"
import { classifyBwrapFailure, isSafeVersion, parseBwrapVersion } from "../../src/sandbox/bwrap"
import { probeBwrap } from "../../src/sandbox/probes"

describe("bwrap version", () => {
  const cases: [string, [number, number, number] | undefined, boolean][] = [
    ["bubblewrap 0.12.0\n", [0, 12, 0], true],
    ["bubblewrap 0.12.1", [0, 12, 1], true],
    ["bubblewrap 0.13", [0, 13, 0], true],
    ["bubblewrap 1.0.0", [1, 0, 0], true],
    ["bubblewrap 0.11.9", [0, 11, 9], false],
    ["bubblewrap 0.8.0", [0, 8, 0], false],
    ["bubblewrap 0.2.10", [0, 2, 10], false],
    ["bwrap: unknown option", undefined, false],
    ["", undefined, false],
  ]
  for (const [output, parsed, safe] of cases)
    test(`${JSON.stringify(output)} → ${parsed?.join(".") ?? "unparsed"}, ${safe ? "safe" : "unsafe"}`, () => {
      expect(parseBwrapVersion(output)).toEqual(parsed)
      expect(isSafeVersion(parseBwrapVersion(output))).toBe(safe)
    })

  test("the installed /usr/bin/bwrap is safe (scripts/install-bwrap.sh ran)", async () => {
    const report = await probeBwrap()
    expect(report).toMatchObject({ safe: true })
  })

  test("a missing binary is reported unsafe, saying what failed", async () => {
    const report = await probeBwrap("/nonexistent/bwrap")
    expect(report.safe).toBe(false)
    expect(report.detail).toContain("did not report a version")
  })
})

describe("classifyBwrapFailure", () => {
  const cases: [string, string | undefined][] = [
    [
      "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.",
      "namespaces-denied",
    ],
    ["bwrap: setting up uid map: Permission denied", "userns-restricted"],
    ["bwrap: Can't mount proc on /newroot/proc: Operation not permitted", "proc-unavailable"],
    [
      "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)",
      "namespace-limit",
    ],
    ["bwrap: execvp nosuchcommand: No such file or directory", "exec-failed"],
    ["bwrap: Can't find source path /nope: No such file or directory", "mount-failed"],
    ["bwrap: something new", "unknown"],
    // The command's own output is never mistaken for bwrap's.
    ["make: *** [all] Error 1\nbwrap: No permissions to create new namespace", undefined],
    ["", undefined],
  ]
  for (const [stderr, code] of cases)
    test(`${JSON.stringify(stderr.slice(0, 50))} → ${code ?? "not bwrap's"}`, () => {
      const failure = classifyBwrapFailure(stderr)
      expect(failure?.code as string | undefined).toBe(code)
      if (failure) expect(failure.hint.length).toBeGreaterThan(20)
    })
})
