// The digest, table-driven: one real-shaped output per test runner, compiler and linker, and what the
// digest must pull out of it; then the rendering (priorities, caps, the exit-code line).
import { describe, expect, test } from "bun:test"
import { digestText, LIMITS, renderDigest } from "../../src/runner/digest"

const cases: { name: string; output: string; tests?: string[]; errors?: string[]; summary?: string[]; trace?: string }[] = [
  {
    name: "bun test",
    output: "test/a.test.ts:\n(pass) math > adds [0.10ms]\n(fail) math > divides by zero [0.31ms]\n\x1b[31m(fail)\x1b[0m parser > reads [2.00ms]\n\n 1 pass\n 2 fail\nRan 3 tests across 1 file. [20.00ms]",
    tests: ["math > divides by zero", "parser > reads"],
    summary: ["1 pass", "2 fail", "Ran 3 tests across 1 file. [20.00ms]"],
  },
  {
    name: "jest",
    output: " FAIL  src/sum.test.js\n  sum\n    ✓ adds (2 ms)\n    ✕ subtracts (5 ms)\n\n  ● sum › subtracts\n\n    expect(received).toBe(expected)\n\nTests:       1 failed, 1 passed, 2 total",
    tests: ["subtracts", "sum › subtracts"],
    summary: ["Tests:       1 failed, 1 passed, 2 total"],
  },
  {
    name: "vitest",
    output: " ❯ src/a.test.ts (2 tests | 1 failed) 5ms\n   × adds > carries 3ms\n FAIL  src/a.test.ts > adds > carries\nAssertionError: expected 3 to be 4\n ❯ src/a.test.ts:7:17\n Test Files  1 failed (1)\n      Tests  1 failed | 1 passed (2)",
    tests: ["adds > carries", "src/a.test.ts > adds > carries"],
    summary: ["Tests  1 failed | 1 passed (2)"],
    trace: "AssertionError: expected 3 to be 4",
  },
  {
    name: "pytest",
    output: "tests/test_a.py::test_ok PASSED\ntests/test_a.py::test_bad FAILED\n___ test_bad ___\n    def test_bad():\n>       assert 1 == 2\nE       assert 1 == 2\n=== short test summary info ===\nFAILED tests/test_a.py::test_bad - assert 1 == 2\nFAILED tests/test_b.py::test_other[param-1] - KeyError\n===== 2 failed, 1 passed in 0.12s =====",
    tests: ["tests/test_a.py::test_bad", "tests/test_b.py::test_other[param-1]"],
    summary: ["===== 2 failed, 1 passed in 0.12s ====="],
  },
  {
    name: "go test",
    output: "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n=== RUN   TestDiv\n    div_test.go:9: got 1, want 2\n--- FAIL: TestDiv (0.00s)\n    --- FAIL: TestDiv/zero (0.00s)\nFAIL\nFAIL\texample.com/calc\t0.004s",
    tests: ["TestDiv", "TestDiv/zero"],
    summary: ["FAIL\texample.com/calc\t0.004s"],
  },
  {
    name: "cargo test",
    output: "running 2 tests\ntest tests::adds ... ok\ntest tests::divides ... FAILED\n\nfailures:\n\n---- tests::divides stdout ----\nthread 'tests::divides' panicked at src/lib.rs:12:9:\nattempt to divide by zero\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
    tests: ["tests::divides"],
    summary: ["test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"],
    trace: "thread 'tests::divides' panicked at src/lib.rs:12:9:",
  },
  {
    name: "mocha",
    output: "  Array\n    ✓ pushes\n    1) pops\n\n  1 passing (5ms)\n  2 failing\n\n  1) Array\n       pops:\n     AssertionError: expected 1 to equal 2\n      at Context.<anonymous> (test/a.js:8:12)\n\n  2) Array #indexOf() returns -1:\n     Error: nope\n",
    tests: ["Array pops", "Array #indexOf() returns -1"],
    summary: ["1 passing (5ms)", "2 failing"],
  },
  {
    name: "tsc",
    output: "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.\nsrc/b.ts:10:1 - error TS2304: Cannot find name 'foo'.\n\nFound 2 errors in 2 files.",
    errors: ["src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.", "src/b.ts:10:1 - error TS2304: Cannot find name 'foo'."],
    summary: ["Found 2 errors in 2 files."],
  },
  {
    name: "gcc, clang and ld",
    output: "main.c: In function 'main':\nmain.c:4:5: error: implicit declaration of function 'foo'\nmain.c:5:1: warning: unused\n/usr/bin/ld: main.o: in function `main':\nmain.c:(.text+0x9): undefined reference to `bar'\ncollect2: error: ld returned 1 exit status\nld.lld: error: undefined symbol: baz\n1 error generated.",
    errors: ["main.c:4:5: error: implicit declaration of function 'foo'", "main.c:(.text+0x9): undefined reference to `bar'", "collect2: error: ld returned 1 exit status", "ld.lld: error: undefined symbol: baz"],
    summary: ["1 error generated."],
  },
  {
    name: "rustc",
    output: "error[E0308]: mismatched types\n --> src/main.rs:4:18\n  |\nerror: could not compile `demo` (bin \"demo\") due to 1 previous error",
    errors: ["error[E0308]: mismatched types", "error: could not compile `demo` (bin \"demo\") due to 1 previous error"],
  },
  {
    name: "a Python traceback",
    output: 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\n  File "app.py", line 2, in main\n    raise ValueError("bad input")\nValueError: bad input',
    trace: "ValueError: bad input",
  },
  {
    name: "a Node stack trace",
    output: "TypeError: Cannot read properties of undefined (reading 'x')\n    at f (/app/a.js:3:11)\n    at Object.<anonymous> (/app/a.js:5:1)\nnext line",
    trace: "    at f (/app/a.js:3:11)",
  },
]

describe("digest extracts", () => {
  for (const c of cases)
    test(c.name, () => {
      const digest = digestText(c.output)
      expect(digest.failingTests.map((f) => f.text)).toEqual(c.tests ?? [])
      if (c.errors) expect(digest.errors.map((f) => f.text)).toEqual(c.errors)
      if (c.summary) expect(digest.summary.map((f) => f.text)).toEqual(c.summary)
      if (c.trace) expect(digest.traces.flat().map((f) => f.text)).toContain(c.trace)
      else expect(digest.traces).toEqual([])
    })
})

test("findings carry their 1-based log line", () => {
  const digest = digestText("a\nb\n(fail) x > y [1ms]\n")
  expect(digest.failingTests).toEqual([{ line: 3, text: "x > y" }])
  expect(digest.lines).toBe(3)
})

test("a failing test reported twice is listed once, and lists stop at their cap", () => {
  const lines = Array.from({ length: 100 }, (_, i) => `(fail) t${i} [1ms]`)
  const digest = digestText(["(fail) t0 [1ms]", ...lines].join("\n"))
  expect(digest.failingTests.length).toBe(LIMITS.tests)
  expect(digest.failingTests[1]!.text).toBe("t1")
})

describe("rendering", () => {
  const facts = { exitCode: 1, runId: "run-20260101T000000-abcdef", logPath: "/s/runs/x/output.log", bytesSeen: 5_300_000, bytesKept: 5_300_000 }

  test("exit code first, then failures with line numbers, then where to read more", () => {
    const text = renderDigest(digestText("noise\n(fail) a > b [1ms]\n 1 fail"), facts)
    expect(text.split("\n")[0]).toBe("exit code: 1 (failed)")
    expect(text).toContain("log: /s/runs/x/output.log, 3 lines, 5.1 MB, run_id: run-20260101T000000-abcdef")
    expect(text).toContain("failing tests (1):\n  L2: a > b")
    expect(text).toContain("sandbox_log_read")
  })

  test.each([
    ["success", { exitCode: 0 }, "exit code: 0 (succeeded)"],
    ["timeout", { exitCode: null, timedOut: true, durationMs: 30_000 }, "exit code: none (timed out after 30s (killed with everything it started))"],
    ["signal", { exitCode: null, signal: "SIGKILL" }, "exit code: none (killed by SIGKILL)"],
    ["cancel", { exitCode: 143, aborted: true }, "exit code: 143 (cancelled (killed with everything it started))"],
  ] as const)("outcome: %s", (_, run, line) => {
    expect(renderDigest(digestText(""), run).split("\n")[0]).toBe(line)
  })

  test("a truncated log says so", () => {
    expect(renderDigest(digestText("x"), { exitCode: 0, bytesSeen: 3_000_000, bytesKept: 1_048_576 })).toContain("log truncated: kept 1.0 MB of 2.9 MB")
  })

  test("the total stays under the cap, shortening last lines before failing tests", () => {
    const long = "y".repeat(190)
    const output = [...Array.from({ length: 30 }, (_, i) => `(fail) test number ${i} ${long}`), ...Array.from({ length: 50 }, (_, i) => `tail ${i} ${long}`)].join("\n")
    const text = renderDigest(digestText(output), facts)
    expect(text.length).toBeLessThanOrEqual(LIMITS.total)
    expect(text).toContain("test number 0 ")
    expect(text).toContain("failing tests (30)")
    expect(text).not.toContain("tail 38 ")
  })
})

describe("linear time on hostile lines", () => {
  // One 1 MB line per shape that made a backtracking pattern blow up, then a failure the digest must still find.
  const attacks: [string, string][] = [
    ["pytest summary", `= ${"1 passed ".repeat(100_000)}`],
    ["spaces", " ".repeat(1_000_000)],
    ["colons and digits", "a:1:".repeat(250_000)],
    ["parentheses", `x(${"1,".repeat(500_000)}`],
    ["frames", `  at ${"at ".repeat(330_000)}`],
    ["ld", `/${"/a".repeat(500_000)}`],
    ["trace start", `Uncaught ${"A".repeat(1_000_000)}`],
    ["ansi", `\x1b[${";".repeat(1_000_000)}`],
  ]
  test.each(attacks)("%s: a 1 MB line digests in well under 100 ms", (_, line) => {
    const started = performance.now()
    const digest = digestText([line, "(fail) math > adds [0.1ms]", " 1 fail"].join("\n"))
    const elapsed = performance.now() - started
    expect(digest.failingTests.map((t) => t.text)).toEqual(["math > adds"])
    // Measured well under 20 ms here; the bound leaves room for a loaded CI machine.
    expect(elapsed).toBeLessThan(250)
  })

  test("control: the full pytest summary line is still recognised", () => {
    expect(digestText("==== 1 failed, 2 passed in 0.12s ====").summary.map((s) => s.text)).toEqual(["==== 1 failed, 2 passed in 0.12s ===="])
  })
})
