// The digest, table-driven: one real-shaped output per test runner, compiler and linker, and what the
// digest must pull out of it; then the rendering (priorities, caps, the exit-code line); then hostile
// lines, on which every pattern and the whole digest must stay linear.
import { beforeAll, describe, expect, test } from "bun:test"
import { createDigester, digestText, LIMITS, renderDigest } from "../../src/runner/digest"
import { eachLine } from "../../src/runner/logs"
import { type Finished, finishes } from "../helpers/finishes"
import { tempDir } from "../helpers/temp"
import { attacks, byName } from "./_hostile"

const HOSTILE = `${import.meta.dir}/_hostile.ts`

const cases: {
  name: string
  output: string
  tests?: string[]
  errors?: string[]
  summary?: string[]
  trace?: string
}[] = [
  {
    name: "bun test",
    output: `test/a.test.ts:
(pass) math > adds [0.10ms]
(fail) math > divides by zero [0.31ms]
\x1b[31m(fail)\x1b[0m parser > reads [2.00ms]

 1 pass
 2 fail
Ran 3 tests across 1 file. [20.00ms]`,
    tests: ["math > divides by zero", "parser > reads"],
    summary: ["1 pass", "2 fail", "Ran 3 tests across 1 file. [20.00ms]"],
  },
  {
    name: "jest",
    output: ` FAIL  src/sum.test.js
  sum
    ✓ adds (2 ms)
    ✕ subtracts (5 ms)

  ● sum › subtracts

    expect(received).toBe(expected)

Tests:       1 failed, 1 passed, 2 total`,
    tests: ["subtracts", "sum › subtracts"],
    summary: ["Tests:       1 failed, 1 passed, 2 total"],
  },
  {
    name: "vitest",
    output: ` ❯ src/a.test.ts (2 tests | 1 failed) 5ms
   × adds > carries 3ms
 FAIL  src/a.test.ts > adds > carries
AssertionError: expected 3 to be 4
 ❯ src/a.test.ts:7:17
 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)`,
    tests: ["adds > carries", "src/a.test.ts > adds > carries"],
    summary: ["Tests  1 failed | 1 passed (2)"],
    trace: "AssertionError: expected 3 to be 4",
  },
  {
    name: "pytest",
    output: `tests/test_a.py::test_ok PASSED
tests/test_a.py::test_bad FAILED
___ test_bad ___
    def test_bad():
>       assert 1 == 2
E       assert 1 == 2
=== short test summary info ===
FAILED tests/test_a.py::test_bad - assert 1 == 2
FAILED tests/test_b.py::test_other[param-1] - KeyError
===== 2 failed, 1 passed in 0.12s =====`,
    tests: ["tests/test_a.py::test_bad", "tests/test_b.py::test_other[param-1]"],
    summary: ["===== 2 failed, 1 passed in 0.12s ====="],
  },
  {
    name: "go test",
    output: `=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestDiv
    div_test.go:9: got 1, want 2
--- FAIL: TestDiv (0.00s)
    --- FAIL: TestDiv/zero (0.00s)
FAIL
FAIL\texample.com/calc\t0.004s`,
    tests: ["TestDiv", "TestDiv/zero"],
    summary: ["FAIL\texample.com/calc\t0.004s"],
  },
  {
    name: "cargo test",
    output: `running 2 tests
test tests::adds ... ok
test tests::divides ... FAILED

failures:

---- tests::divides stdout ----
thread 'tests::divides' panicked at src/lib.rs:12:9:
attempt to divide by zero

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s`,
    tests: ["tests::divides"],
    summary: ["test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"],
    trace: "thread 'tests::divides' panicked at src/lib.rs:12:9:",
  },
  {
    name: "mocha",
    output: `  Array
    ✓ pushes
    1) pops

  1 passing (5ms)
  2 failing

  1) Array
       pops:
     AssertionError: expected 1 to equal 2
      at Context.<anonymous> (test/a.js:8:12)

  2) Array #indexOf() returns -1:
     Error: nope
`,
    tests: ["Array pops", "Array #indexOf() returns -1"],
    summary: ["1 passing (5ms)", "2 failing"],
  },
  {
    name: "tsc",
    output: `src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.
src/b.ts:10:1 - error TS2304: Cannot find name 'foo'.

Found 2 errors in 2 files.`,
    errors: [
      "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.",
      "src/b.ts:10:1 - error TS2304: Cannot find name 'foo'.",
    ],
    summary: ["Found 2 errors in 2 files."],
  },
  {
    name: "gcc, clang and ld",
    output: `main.c: In function 'main':
main.c:4:5: error: implicit declaration of function 'foo'
main.c:5:1: warning: unused
/usr/bin/ld: main.o: in function \`main':
main.c:(.text+0x9): undefined reference to \`bar'
collect2: error: ld returned 1 exit status
ld.lld: error: undefined symbol: baz
1 error generated.`,
    errors: [
      "main.c:4:5: error: implicit declaration of function 'foo'",
      "main.c:(.text+0x9): undefined reference to `bar'",
      "collect2: error: ld returned 1 exit status",
      "ld.lld: error: undefined symbol: baz",
    ],
    summary: ["1 error generated."],
  },
  {
    name: "rustc",
    output: `error[E0308]: mismatched types
 --> src/main.rs:4:18
  |
error: could not compile \`demo\` (bin "demo") due to 1 previous error`,
    errors: ["error[E0308]: mismatched types", 'error: could not compile `demo` (bin "demo") due to 1 previous error'],
  },
  {
    name: "a Python traceback",
    output: `Traceback (most recent call last):
  File "app.py", line 3, in <module>
    main()
  File "app.py", line 2, in main
    raise ValueError("bad input")
ValueError: bad input`,
    trace: "ValueError: bad input",
  },
  {
    name: "a Node stack trace",
    output: `TypeError: Cannot read properties of undefined (reading 'x')
    at f (/app/a.js:3:11)
    at Object.<anonymous> (/app/a.js:5:1)
next line`,
    trace: "    at f (/app/a.js:3:11)",
  },
  {
    name: "pytest verbose needs a node id",
    output: `tests/t.py FAILED
tests/t.py::test_x FAILED
FAILED tests/t.py - no node id`,
    tests: ["tests/t.py::test_x"],
  },
  {
    name: "ld, a section and a symbol without quotes",
    output: "foo.o:(.text.startup+0x5): undefined reference to bar",
    errors: ["foo.o:(.text.startup+0x5): undefined reference to bar"],
  },
  {
    name: "go build",
    output: `./main.go:4:2: undefined: foo
cmd/x.go:5:1: declared and not used: y`,
    errors: ["./main.go:4:2: undefined: foo", "cmd/x.go:5:1: declared and not used: y"],
  },
  {
    name: "a Java stack trace",
    output: `Exception in thread "main" java.lang.IllegalStateException: x
\tat Main.run(Main.java:3)
\tat Main.main(Main.java:1)
done`,
    trace: "\tat Main.run(Main.java:3)",
  },
  {
    name: "a Go panic",
    output: `panic: boom
goroutine 1 [running]:
main.main()`,
    trace: "goroutine 1 [running]:",
  },
  {
    name: "mocha: an indented block longer than any title is not a test name",
    output: [
      "  1 failing",
      "",
      "  1) suite",
      ...Array.from({ length: 20 }, (_, i) => `       line ${i}`),
      "       end:",
    ].join("\n"),
    summary: ["1 failing"],
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
  const facts = {
    exitCode: 1,
    runId: "run-20260101T000000-abcdef",
    logPath: "/s/runs/x/output.log",
    bytesSeen: 5_300_000,
    bytesKept: 5_300_000,
  }

  test("exit code first, then failures with line numbers, then where to read more", () => {
    const text = renderDigest(digestText("noise\n(fail) a > b [1ms]\n 1 fail"), facts)
    expect(text.split("\n")[0]).toBe("exit code: 1 (failed)")
    expect(text).toContain("log: /s/runs/x/output.log, 3 lines, 5.1 MB, run_id: run-20260101T000000-abcdef")
    expect(text).toContain("failing tests (1):\n  L2: a > b")
    expect(text).toContain("sandbox_log_read")
  })

  test.each([
    ["success", { exitCode: 0 }, "exit code: 0 (succeeded)"],
    [
      "timeout",
      { exitCode: null, timedOut: true, durationMs: 30_000 },
      "exit code: none (timed out after 30s (killed with everything it started))",
    ],
    ["signal", { exitCode: null, signal: "SIGKILL" }, "exit code: none (killed by SIGKILL)"],
    ["cancel", { exitCode: 143, aborted: true }, "exit code: 143 (cancelled (killed with everything it started))"],
  ] as const)("outcome: %s", (_, run, line) => {
    expect(renderDigest(digestText(""), run).split("\n")[0]).toBe(line)
  })

  test("a truncated log says so", () => {
    expect(renderDigest(digestText("x"), { exitCode: 0, bytesSeen: 3_000_000, bytesKept: 1_048_576 })).toContain(
      "log cut: kept 1.0 MB of 2.9 MB (its head and tail)",
    )
  })

  test("the total stays under the cap, shortening last lines before failing tests", () => {
    const long = "y".repeat(190)
    const output = [
      ...Array.from({ length: 30 }, (_, i) => `(fail) test number ${i} ${long}`),
      ...Array.from({ length: 50 }, (_, i) => `tail ${i} ${long}`),
    ].join("\n")
    const text = renderDigest(digestText(output), facts)
    expect(text.length).toBeLessThanOrEqual(LIMITS.total)
    expect(text).toContain("test number 0 ")
    expect(text).toContain("failing tests (30)")
    expect(text).not.toContain("tail 38 ")
  })
})

describe("linear time on hostile lines", () => {
  // The digest runs in the OpenCode server on every line a command prints: a 24 KB line once held it for
  // 12 s. Every pattern, then the whole digest, runs on each attack's 1 MB line in a process of its own
  // (test/runner/_hostile.ts). Measured: 1 to 3 ms per 1 MB line, the whole run in seconds; a quadratic
  // pattern takes minutes there (~10 ms per 4 KB line, squared 256 times), a cubic one never ends. The
  // deadline only stops the wait; what is asserted is how far the program got.
  const DEADLINE_MS = 120_000
  let run: Finished
  let reached = new Set<number>()
  beforeAll(async () => {
    run = await finishes([HOSTILE, JSON.stringify({ length: 1_000_000 })], DEADLINE_MS)
    reached = new Set(run.stdout.match(/^ok \d+$/gm)?.map((line) => Number(line.slice(3))) ?? [])
  }, DEADLINE_MS + 10_000)
  const stuckAt = () => run.stdout.match(/^try .*$/gm)?.at(-1)

  test("every exported pattern is under test", () => {
    // SUMMARY_PATTERNS[4] is pytest's summary, checked in code rather than by one regex.
    expect(byName.length).toBeGreaterThan(30)
    expect(byName.map(([name]) => name)).toContain("SUMMARY_PATTERNS[4]")
  })

  for (const [index, [name]] of attacks.entries())
    test(`${name}: every pattern gets through it at 1 MB`, () => {
      expect(reached.has(index) ? "through" : `stopped at ${stuckAt()}`).toBe("through")
    })

  for (const [index, [name]] of attacks.entries())
    test(`${name}: a 1 MB line is digested, and what follows it is still found`, () => {
      const line = run.stdout.match(new RegExp(`^digest ${index} (.*)$`, "m"))?.[1]
      expect(line ? "digested" : `stopped at ${stuckAt()}`).toBe("digested")
      const digest = JSON.parse(line!)
      expect(digest.lines).toBe(6)
      expect(digest.failingTests).toContainEqual({ line: 4, text: "math > adds" })
      expect(digest.errors).toContainEqual({ line: 5, text: "src/a.ts(3,5): error TS2322: bad" })
      expect(digest.lastSummary).toEqual({ line: 6, text: "1 fail" })
      // The long line itself is kept as its number and an excerpt (unless what the digest looked at is blank).
      if (!digest.blank) expect(digest.excerptChars).toBe(LIMITS.lineChars)
    })

  test("control: a quadratic pattern among them stops the run at the first line it meets", async () => {
    // a*b on a line of letters with no b: 1.8 s at 64 KB, minutes at 1 MB. A short deadline is enough here.
    const quadratic = await finishes([HOSTILE, JSON.stringify({ length: 1_000_000, extra: "a*b" })], 10_000)
    expect(quadratic.finished).toBe(false)
    const cargo = attacks.findIndex(([name]) => name.startsWith("cargo"))
    expect(quadratic.stdout.match(/^try .*$/gm)?.at(-1)).toBe(`try ${cargo} extra`)
  }, 30_000)

  test("control: the full pytest summary line is still recognised", () => {
    expect(digestText("==== 1 failed, 2 passed in 0.12s ====").summary.map((s) => s.text)).toEqual([
      "==== 1 failed, 2 passed in 0.12s ====",
    ])
  })
})

describe("a log that is one long line", () => {
  // The runner feeds the digest through eachLine; re-splitting a growing remainder per chunk was
  // quadratic (a 64 MB line took 0.9 s, 128 MB 4.3 s), joining a line's pieces once is linear. What is
  // counted is the characters searched, split and joined: 8 times the line, 8 times the work.
  const logOf = async (dir: string, megabytes: number) => {
    const file = `${dir}/output-${megabytes}.log`
    await Bun.write(file, `${"x".repeat(megabytes * 1_000_000)}\n(fail) math > adds [0.1ms]\n 1 fail\n`)
    return file
  }

  test.each([1, 64])(
    "%i MB read and digested, the failure after it found",
    async (megabytes) => {
      await using dir = await tempDir("oc-orch-digest-")
      const digester = createDigester()
      const lines = await eachLine(await logOf(dir.path, megabytes), (line) => digester.push(line))
      expect(lines).toBe(3)
      expect(digester.result().failingTests).toEqual([{ line: 2, text: "math > adds" }])
    },
    60_000,
  )

  test("8 times the line is at most 8 times the work (control: splitting the remainder per chunk is 8 times more)", async () => {
    await using dir = await tempDir("oc-orch-digest-")
    const one = await logOf(dir.path, 1)
    const many = await logOf(dir.path, 8)
    const work = async (file: string) => (await charactersHandled(() => eachLine(file, () => {}))).handled
    const ratio = (await work(many)) / (await work(one))
    expect(ratio).toBeGreaterThan(4)
    expect(ratio).toBeLessThan(8 * 1.1)
    const splitting = async (file: string) => (await charactersHandled(() => eachLineBySplitting(file))).handled
    expect((await splitting(many)) / (await splitting(one))).toBeGreaterThan(8 * 4)
  }, 60_000)
})

/** The quadratic way eachLine once read: `rest + chunk` split again for every chunk. */
async function eachLineBySplitting(file: string) {
  const decoder = new TextDecoder()
  let rest = ""
  let number = 0
  for await (const chunk of Bun.file(file).stream()) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split("\n")
    rest = parts.pop() ?? ""
    number += parts.length
  }
  return number + (rest ? 1 : 0)
}

/** The characters that String indexOf and split, and Array join, went over while `work` ran. */
async function charactersHandled<T>(work: () => Promise<T>): Promise<{ handled: number; result: T }> {
  const strings = String.prototype
  const arrays = Array.prototype
  const originals = { indexOf: strings.indexOf, split: strings.split, join: arrays.join }
  let handled = 0
  strings.indexOf = function (this: string, search: string, from = 0) {
    const found = originals.indexOf.call(this, search, from)
    handled += (found === -1 ? this.length : found + search.length) - from
    return found
  }
  strings.split = function (this: string, ...args: Parameters<string["split"]>) {
    handled += this.length
    return originals.split.apply(this, args)
  } as typeof strings.split
  arrays.join = function (this: unknown[], separator?: string) {
    const joined = originals.join.call(this, separator)
    handled += joined.length
    return joined
  }
  try {
    const result = await work()
    return { handled, result }
  } finally {
    strings.indexOf = originals.indexOf
    strings.split = originals.split
    arrays.join = originals.join
  }
}
