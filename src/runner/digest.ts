// The runner's deterministic digest: what a model needs from a command's output (exit code, failing
// tests, compiler and linker errors, stack traces, summary and last lines), each with its line number
// in the log so the model can read around it. Pure: lines in, a bounded text out. It is fed line by
// line, so a 128 MB log never sits in memory.
import {
  ERROR_PATTERNS,
  FAILING_TEST_PATTERNS,
  MOCHA_FAILING,
  MOCHA_ITEM,
  MOCHA_TITLE_LINE,
  PYTHON_EXCEPTION,
  stripAnsi,
  SUMMARY_PATTERNS,
  TRACE_FRAME,
  TRACE_START,
} from "./patterns"

export interface Finding {
  /** 1-based line number in the log. */
  line: number
  text: string
}

export interface RunFacts {
  exitCode: number | null
  signal?: string | null
  timedOut?: boolean
  aborted?: boolean
  durationMs?: number
  runId?: string
  logPath?: string
  /** Bytes the command printed, and how many the log kept. */
  bytesSeen?: number
  bytesKept?: number
}

export interface Digest {
  lines: number
  failingTests: Finding[]
  errors: Finding[]
  traces: Finding[][]
  summary: Finding[]
  last: Finding[]
}

export const LIMITS = {
  tests: 40,
  errors: 20,
  traces: 2,
  traceLines: 6,
  summary: 6,
  last: 12,
  lineChars: 200,
  total: 2000,
} as const

/**
 * How much of a line the patterns see. Every line they are written for (a test name with its suite
 * path, "file:line: error …") starts within a few hundred characters, and 4096 is Linux's PATH_MAX,
 * so even a path-prefixed error keeps its head; what runs longer is a minified bundle, a progress bar
 * redrawn with "\r" or a JSON blob, and a report line shows only LIMITS.lineChars of it anyway. The
 * cap bounds each line's cost whatever a command prints; the patterns' linearity bounds it per byte.
 */
export const MATCH_CHARS = 4096

/** A mocha title spans a suite path of a few lines; past this many, the indented block is something else. */
const MOCHA_TITLE_LINES = 12

const clip = (text: string, max: number = LIMITS.lineChars) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

export interface Digester {
  push(line: string): void
  result(): Digest
}

export function createDigester(): Digester {
  const digest: Digest = { lines: 0, failingTests: [], errors: [], traces: [], summary: [], last: [] }
  const seenTests = new Set<string>()
  const seenErrors = new Set<string>()
  let trace: Finding[] | undefined
  let mocha: { title: string[]; line: number } | undefined
  let mochaListing = false

  const addTest = (name: string, line: number) => {
    const key = name.trim()
    if (seenTests.has(key) || digest.failingTests.length >= LIMITS.tests) return
    seenTests.add(key)
    digest.failingTests.push({ line, text: clip(key) })
  }

  return {
    push(raw) {
      const number = ++digest.lines
      // Clipped before any regex, stripAnsi's included: the digest runs inside the shared OpenCode server,
      // where one 24 KB line once cost 12 s of backtracking. The line number and an excerpt survive.
      const line = stripAnsi(raw.length > MATCH_CHARS ? raw.slice(0, MATCH_CHARS) : raw)
      if (line.trim()) {
        digest.last.push({ line: number, text: clip(line) })
        if (digest.last.length > LIMITS.last) digest.last.shift()
      }

      if (trace) {
        if (trace.length < LIMITS.traceLines && TRACE_FRAME.test(line)) trace.push({ line: number, text: clip(line) })
        else {
          // Python ends a traceback with the exception itself, unindented.
          if (
            trace[0]!.text.startsWith("Traceback") &&
            PYTHON_EXCEPTION.test(line) &&
            trace.length < LIMITS.traceLines + 1
          )
            trace.push({ line: number, text: clip(line) })
          trace = undefined
        }
      }
      if (
        !trace &&
        digest.traces.length < LIMITS.traces &&
        TRACE_START.some((re) => re.test(line)) &&
        !digest.traces.some((t) => t[0]!.text === clip(line))
      ) {
        trace = [{ line: number, text: clip(line) }]
        digest.traces.push(trace)
      }

      for (const { pattern } of FAILING_TEST_PATTERNS) {
        const match = pattern.exec(line)
        if (match?.[1]) {
          addTest(match[1], number)
          break
        }
      }
      if (MOCHA_FAILING.test(line)) mochaListing = true
      else if (mochaListing) {
        // Mocha's closing listing: "  1) suite" then deeper-indented title lines, the last ending in ":".
        const item = MOCHA_ITEM.exec(line)
        if (item) mocha = { title: [item[2]!.trim()], line: number }
        else if (mocha && mocha.title.length < MOCHA_TITLE_LINES && MOCHA_TITLE_LINE.test(line))
          mocha.title.push(line.trim())
        else mocha = undefined
        if (mocha?.title.at(-1)?.endsWith(":")) {
          addTest(mocha.title.join(" ").replace(/:$/, ""), mocha.line)
          mocha = undefined
        }
      }

      if (digest.errors.length < LIMITS.errors && ERROR_PATTERNS.some((re) => re.test(line))) {
        const key = line.trim()
        if (!seenErrors.has(key)) {
          seenErrors.add(key)
          digest.errors.push({ line: number, text: clip(key) })
        }
      }
      if (SUMMARY_PATTERNS.some((re) => re.test(line))) {
        digest.summary.push({ line: number, text: clip(line.trim()) })
        if (digest.summary.length > LIMITS.summary) digest.summary.shift()
      }
    },
    result: () => digest,
  }
}

export function digestText(text: string): Digest {
  const digester = createDigester()
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  for (const line of lines) digester.push(line)
  return digester.result()
}

function outcome(facts: RunFacts): string {
  if (facts.timedOut)
    return `timed out after ${Math.round((facts.durationMs ?? 0) / 1000)}s (killed with everything it started)`
  if (facts.aborted) return "cancelled (killed with everything it started)"
  if (facts.exitCode === null) return `killed by ${facts.signal ?? "a signal"}`
  return facts.exitCode === 0 ? "succeeded" : "failed"
}

const size = (bytes: number) =>
  bytes >= 1_048_576
    ? `${(bytes / 1_048_576).toFixed(1)} MB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${bytes} B`

/**
 * The text the runner agent sees. Sections in priority order; each is dropped or shortened when the
 * total would pass LIMITS.total, lowest priority first, so the exit code and the failures survive.
 */
export function renderDigest(digest: Digest, facts: RunFacts): string {
  const header = [`exit code: ${facts.exitCode ?? "none"} (${outcome(facts)})`]
  const logLine = [
    facts.logPath && `log: ${facts.logPath}`,
    `${digest.lines} lines`,
    facts.bytesSeen !== undefined && size(facts.bytesSeen),
    facts.runId && `run_id: ${facts.runId}`,
  ]
  header.push(logLine.filter(Boolean).join(", "))
  if (facts.bytesSeen !== undefined && facts.bytesKept !== undefined && facts.bytesKept < facts.bytesSeen)
    header.push(`log cut: kept ${size(facts.bytesKept)} of ${size(facts.bytesSeen)} (its head and tail)`)
  const at = (f: Finding) => `  L${f.line}: ${f.text}`
  const shown = new Set(
    [...digest.failingTests, ...digest.errors, ...digest.summary, ...digest.traces.flat()].map((f) => f.line),
  )
  const sections: { title: string; lines: string[] }[] = [
    {
      title: `failing tests (${digest.failingTests.length}${digest.failingTests.length >= LIMITS.tests ? "+" : ""})`,
      lines: digest.failingTests.map(at),
    },
    {
      title: `errors (${digest.errors.length}${digest.errors.length >= LIMITS.errors ? "+" : ""})`,
      lines: digest.errors.map(at),
    },
    { title: "summary", lines: digest.summary.map(at) },
    { title: "stack traces", lines: digest.traces.flatMap((trace) => trace.map(at)) },
    // Last lines already shown above (a summary at the very end) are not repeated.
    { title: "last lines", lines: digest.last.filter((f) => !shown.has(f.line)).map(at) },
  ].filter((section) => section.lines.length)
  const footer = facts.runId
    ? `more: sandbox_log_read (run_id, offset line, limit) or sandbox_log_grep (run_id, pattern)`
    : ""
  const render = () =>
    [...header, ...sections.flatMap((s) => [`${s.title}:`, ...s.lines]), footer].filter(Boolean).join("\n")
  let text = render()
  // Shorten from the least important section up: last lines, traces, summary, errors, then tests.
  for (let index = sections.length - 1; index >= 0 && text.length > LIMITS.total; index--) {
    const section = sections[index]!
    while (section.lines.length > 1 && text.length > LIMITS.total) {
      section.lines.splice(section.title === "last lines" ? 0 : -1, 1)
      text = render()
    }
  }
  return text.length > LIMITS.total ? `${text.slice(0, LIMITS.total - 1)}…` : text
}
