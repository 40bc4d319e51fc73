// What the digest recognises in a command's output, as data: failing-test lines per test runner,
// compiler and linker errors, the first line of a stack trace, and the summary lines runners print
// last. Each pattern was written against the tool's real output format; the table tests in
// test/runner/digest.test.ts pin one sample per line shape.
//
// Every pattern runs inside the OpenCode server on every line a command prints, so each must cost time
// linear in the line. No nested quantifiers; and where two quantifiers can trade characters, each split
// a failing match tries must be rejected in constant time. `\s+.*\d+ ` (cubic), `(\S+::\S+) FAILED` and
// `(.+ › .+)$` (quadratic: a "\r" or U+2028 in mid-line stops `.` and fails the `$`) were not. A lookahead,
// which is never re-entered once it matched, or a few checks in code say such things linearly.
// test/runner/digest.test.ts runs every pattern exported here against hostile lines.

/** Strips ANSI colour and cursor sequences: runners colour their output even into a pipe when forced. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is exactly what an ANSI sequence starts with
export const stripAnsi = (line: string) => line.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/\r$/, "")

/** A failing test: the pattern's first capture group is the test's name. */
export interface TestPattern {
  runner: string
  pattern: RegExp
}

export const FAILING_TEST_PATTERNS: readonly TestPattern[] = [
  // bun test: "(fail) suite > name [0.12ms]"
  { runner: "bun", pattern: /^\s*\(fail\) (.+?)(?: \[[\d.]+m?s\])?$/ },
  // jest and vitest list items: "  ✕ name (5 ms)", "  × name 5ms"
  { runner: "jest", pattern: /^\s*[✕×] (.+?)(?: \(\d+(?:\.\d+)? ?m?s\)| \d+(?:\.\d+)?m?s)?$/ },
  // jest's failure headers: "  ● suite › name". The lookahead finds the " › " once; as `(.+? › .+)$`
  // every " › " was retried to the end of the line when a "\r" in mid-line made `$` fail.
  { runner: "jest", pattern: /^\s*● (?=.+? › .)(.+)/ },
  // vitest: " FAIL  src/a.test.ts > suite > name"
  { runner: "vitest", pattern: /^\s*FAIL\s+(\S+ > .+)$/ },
  // pytest short summary "FAILED tests/t.py::test_x - AssertionError" and verbose "tests/t.py::test_x FAILED".
  // The node id is one run of non-spaces holding "::": a lookahead checks the "::", since `(\S+::\S+) FAILED`
  // tried every "::" of a long run against every end of it (quadratic).
  { runner: "pytest", pattern: /^FAILED (?=\S+::\S)(\S+)/ },
  { runner: "pytest", pattern: /^(?=\S+::\S)(\S+) FAILED\b/ },
  // go test: "--- FAIL: TestName (0.00s)" (subtests are indented)
  { runner: "go", pattern: /^\s*--- FAIL: (\S+)/ },
  // cargo test: "test tests::name ... FAILED"
  { runner: "cargo", pattern: /^test (\S+) \.\.\. FAILED$/ },
  // mocha's spec reporter while running: "    1) name" (the listing after "N failing" is handled separately)
]

/** Mocha prints "  N failing" and then numbered failures whose title spans indented lines ending in ":". */
export const MOCHA_FAILING = /^\s*(\d+) failing\b/
export const MOCHA_ITEM = /^\s{1,4}(\d+)\) (.+)$/
export const MOCHA_TITLE_LINE = /^\s{5,}\S/

/** Python ends a traceback with the exception itself, unindented: "ValueError: bad input". */
export const PYTHON_EXCEPTION = /^\w[\w.]*: /

export const ERROR_PATTERNS: readonly RegExp[] = [
  // tsc: "src/a.ts(3,5): error TS2322: …" and the pretty form "src/a.ts:3:5 - error TS2322: …"
  /^\S+\(\d+,\d+\): error TS\d+: .+/,
  /^\S+:\d+:\d+ - error TS\d+: .+/,
  // gcc and clang: "a.c:10:5: error: …", "fatal error: …"
  /^\S+:\d+(?::\d+)?: (?:fatal )?error: .+/,
  // rustc and cargo: "error[E0308]: mismatched types", "error: could not compile …"
  /^error(?:\[E\d+\])?: .+/,
  // linkers: GNU ld, lld, the macOS-style "ld: error:", and collect2's closing line
  new RegExp(
    /^(?:\/\S*\/)?(?:ld|ld\.lld|ld\.gold|ld\.bfd)(?:\.\w+)?: /.source +
      /.*(?:error|undefined reference|cannot find|multiple definition).*/.source,
  ),
  // "main.c:(.text+0x9): undefined reference to …": a section name holds no parenthesis, and `[^()]*`
  // (not `.*`) stops at the next "(" so a line of many ":(.text" is scanned once, not once per candidate.
  /^\S+:\(\.text[^()]*\): undefined reference to ./,
  /undefined reference to [`'].+/,
  /^collect2: error: .+/,
  // go build: "./main.go:4:2: undefined: foo". `\S+` covers the "./" (a `\.?\/?` before it only multiplied the ways to
  // match).
  /^\S+\.go:\d+:\d+: .+/,
]

/** Lines that begin a stack trace or a crash report. */
export const TRACE_START: readonly RegExp[] = [
  /^Traceback \(most recent call last\):/,
  /^panic: .+/,
  /^thread '.+' panicked at .+/,
  /^Exception in thread ".+"/,
  /^(?:Uncaught )?(?:[A-Z]\w*)?(?:Error|Exception)(?: \[\w+\])?: .+/,
]

/**
 * A frame inside a trace: JS "    at f (a.js:1:2)", Python "  File …", Java "\tat …", Go "\tmain.go:12".
 * No `.*$` tails: with a "\r" in mid-line, `$` failed and every `", line 1` or `.go:1` was retried to the end.
 */
export const TRACE_FRAME =
  /^(?:\s+at .|\s+File ".+", line \d|\tat .|\t\S+\.go:\d|\s{2,}\S|goroutine \d+ \[.+\]:$|\s+\d+: .)/

/** A line test: a regular expression, or code where one regex would backtrack. */
export interface LineTest {
  test(line: string): boolean
}

/**
 * pytest's "==== 1 failed, 2 passed in 0.12s ====". As one regex (`^=+ .*\d+ … .* in [\d.]+s.* =+$`)
 * its three `.*` backtrack cubically on a long line of `=` and digits: split into linear checks.
 */
const PYTEST_SUMMARY: LineTest = {
  test: (line) =>
    /^=+ /.test(line) && /=$/.test(line) && /\d (?:failed|passed|error)/.test(line) && / in [\d.]+s\b/.test(line),
}

/** Summary lines test runners and builds print near the end. */
export const SUMMARY_PATTERNS: readonly LineTest[] = [
  /^\s*\d+ (?:pass|fail)$/, // bun
  /^\s*Ran \d+ tests? across \d+ files?/, // bun
  // jest. Was `:\s+.*\d+ `, three quantifiers over spaces and digits: cubic on "Tests:", spaces, digits.
  /^Tests?:\s.*\d (?:failed|passed|total)/,
  /^\s*Tests?\s+\d+ (?:failed|passed)/, // vitest
  PYTEST_SUMMARY,
  /^test result: (?:FAILED|ok)\. /, // cargo
  /^(?:FAIL|ok)\s+\S+\s+[\d.]+s$/, // go
  /^\s*\d+ (?:passing|failing|pending)\b/, // mocha
  /^Found \d+ errors?/, // tsc
  /^\d+ errors? generated\./, // clang
]
