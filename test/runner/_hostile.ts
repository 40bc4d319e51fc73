// Hostile lines for the digest's patterns, and a program that runs them: `bun _hostile.ts '{"length":N}'`
// tests every pattern patterns.ts exports (the digest's clip taken away) on each attack's line of N
// characters, printing `try <attack> <pattern>` before and `ok <attack>` after each row, then digests the
// same lines whole, printing `digest <attack> <json>`. The test gives it a deadline that only stops the
// wait: a linear pattern ends in milliseconds on a megabyte, a quadratic one in minutes.
import { digestText, MATCH_CHARS } from "../../src/runner/digest"
import * as patterns from "../../src/runner/patterns"

/** A name, a prefix, runs that share one pattern's quantifiers' characters, an end that fails it. */
export type Attack = [string, string, string[], string?]

// Each row is a line built to make one pattern backtrack: a prefix, runs that share its quantifiers'
// characters (each filling an equal share of the line), and an end such as a "\r" that stops `.` and
// fails a `$`.
export const attacks: Attack[] = [
  ["stripAnsi: an escape never closed", "\x1b[", [";"]],
  ["stripAnsi: escapes back to back", "", ["\x1b[1;"]],
  ["bun: brackets and digits", "(fail) ", [" [1"], "\r"],
  ["jest ✕: parentheses and digits", "✕ ", [" (1", " 1"], "\r"],
  ["jest ●: many › then a \\r", "● ", [" › "], "\r"],
  ["vitest FAIL: many >", " FAIL ", [" > "], "\r"],
  ["pytest FAILED: a run of ::", "FAILED ", ["a::"], "::"],
  ["pytest verbose: a run of :: never followed by FAILED", "", ["::"]],
  ["go --- FAIL: spaces", "--- FAIL:", [" "]],
  ["cargo: a name never followed by ...", "test ", ["a"], " .."],
  ["mocha: indentation and digits", "  ", [" ", "1"], ")"],
  ["tsc: parentheses, digits and commas", "x", ["(1,"]],
  ["tsc pretty and gcc: colons and digits", "a", [":1"]],
  ["go build: .go:1: runs", "", [".go:1:"]],
  ["rustc: an error code never closed", "error[E", ["1"]],
  ["ld: slashes", "/", ["a/"]],
  ["ld: a path then ld: with no error word", "/", ["ld/"], "ld: x"],
  ["ld: many :(.text", "", ["a:(.text"]],
  ["ld: undefined reference without a quote", "", ["undefined reference to "]],
  ["rust panic: many panicked at", "thread '", ["' panicked at "], "\r"],
  ["java: quotes", 'Exception in thread "', ['"a']],
  ["JS error: a long name", "Uncaught ", ["A"]],
  ["JS error: Error Error …", "", ["Error"]],
  ["frames: at at at …", "  at ", ["at "], "\r"],
  ['frames: File ", line 1 …', '  File "', ['", line 1'], "\r"],
  ["frames: Go .go:1 after a tab", "\t", ["a.go:1"], "\r"],
  ["frames: goroutine ]: …", "goroutine 1 [", ["]:"], "\r"],
  ["frames: spaces then digits", "", [" ", "1"]],
  ["jest Tests: spaces then digits", "Tests:", [" ", "1"]],
  ["vitest Tests: spaces then digits", " Tests", [" ", "1"]],
  ["pytest summary: = then passed counts", "= ", ["1 passed "]],
  ["pytest summary: digits then =", "= ", ["1", "="]],
  ["pytest summary: many in 1", "= ", [" in 1"]],
  ["go summary: spaces and words", "FAIL", [" a", " 1"]],
  ["Python exception: words and dots", "", ["a."]],
]

export const hostile = (length: number, prefix: string, runs: string[], end = "") => {
  const share = Math.floor((length - prefix.length - end.length) / runs.length)
  return prefix + runs.map((run) => run.repeat(Math.ceil(share / run.length)).slice(0, share)).join("") + end
}

// Every pattern patterns.ts exports, by name, with the digest's clip taken away: the clip bounds a
// line's cost, but only linear patterns bound a log's (a quadratic one cost ~10 ms per 4 KB line, a cubic one 2 s).
type Pattern = RegExp | patterns.LineTest | patterns.TestPattern
export const byName = Object.entries(patterns).flatMap(([name, value]): [string, patterns.LineTest][] => {
  if (value instanceof RegExp) return [[name, value]]
  if (Array.isArray(value))
    return (value as readonly Pattern[]).map((item, index) => [
      `${name}[${index}]`,
      "pattern" in item ? item.pattern : item,
    ])
  return []
})
byName.push(["stripAnsi", { test: (line) => patterns.stripAnsi(line) === line }])

/** A whole output around one hostile line: a trace and a mocha listing open before it, failures after. */
export const outputAround = (line: string) =>
  [
    "TypeError: boom",
    "  2 failing",
    line,
    "(fail) math > adds [0.1ms]",
    "src/a.ts(3,5): error TS2322: bad",
    " 1 fail",
  ].join("\n")

/** Whole within the MATCH_CHARS the patterns see (its end included), then more of the same to `length`. */
export const longLine = ([, prefix, runs, end]: Attack, length: number) =>
  hostile(MATCH_CHARS, prefix, runs, end) + hostile(length - MATCH_CHARS, "", runs, end)

if (import.meta.main) {
  const { length, extra } = JSON.parse(process.argv[2] ?? "{}") as { length: number; extra?: string }
  const tests: [string, patterns.LineTest][] = extra ? [["extra", new RegExp(extra)], ...byName] : byName
  attacks.forEach(([, prefix, runs, end], index) => {
    const line = hostile(length, prefix, runs, end)
    for (const [name, pattern] of tests) {
      console.log(`try ${index} ${name}`)
      pattern.test(line)
    }
    console.log(`ok ${index}`)
  })
  attacks.forEach((attack, index) => {
    const line = longLine(attack, length)
    const digest = digestText(outputAround(line))
    const excerpt = digest.last.find((finding) => finding.line === 3)
    const seen = {
      lines: digest.lines,
      failingTests: digest.failingTests,
      errors: digest.errors,
      lastSummary: digest.summary.at(-1),
      blank: !line.slice(0, MATCH_CHARS).trim(),
      excerptChars: excerpt?.text.length,
    }
    console.log(`digest ${index} ${JSON.stringify(seen)}`)
  })
}
