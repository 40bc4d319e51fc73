// The runner's logs under the state dir (`runs/<run_id>/output.log` beside `run.json`): creating a
// run, recording how it ended, pruning by age and count, and reading a log back in slices or by
// search, streamed line by line because a log may hold up to 512 MB.
import { mkdir, readdir, rm } from "node:fs/promises"
import { fail } from "../errors"
import { readJson, writeJson } from "../util/fs"
import { run } from "../util/process"
import { createDigester, type Digest, type RunFacts } from "./digest"

export interface RunRecord {
  id: string
  sessionID: string
  agent: string
  profile: string
  workspace: string
  command: string
  startedAt: string
  finishedAt?: string
  exitCode?: number | null
  timedOut?: boolean
  bytesSeen?: number
  bytesKept?: number
  lines?: number
}

export const RUN_ID = /^run-\d{8}T\d{6}-[a-z0-9]{6}$/

export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "")
  return `run-${stamp}-${Math.random().toString(36).slice(2, 8).padEnd(6, "0")}`
}

const runDir = (runsDir: string, id: string) => `${runsDir}/${id}`
export const logPath = (runsDir: string, id: string) => `${runDir(runsDir, id)}/output.log`

export async function createRun(runsDir: string, record: Omit<RunRecord, "id" | "startedAt">): Promise<RunRecord> {
  const run: RunRecord = { ...record, id: newRunId(), startedAt: new Date().toISOString() }
  // 0700: a log may hold whatever the command printed, secrets included.
  await mkdir(runDir(runsDir, run.id), { recursive: true, mode: 0o700 })
  await writeJson(`${runDir(runsDir, run.id)}/run.json`, run, 0o600)
  return run
}

export const saveRun = (runsDir: string, run: RunRecord) => writeJson(`${runDir(runsDir, run.id)}/run.json`, run, 0o600)

/**
 * What every reader of a run record uses, checked by hand: this module is also bundled into the
 * OpenCode plugin, which carries no schema library. A record without them reads as absent.
 */
function isRun(value: unknown, id: string): value is RunRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const run = value as Record<string, unknown>
  const text = (key: string) => typeof run[key] === "string"
  return run.id === id && text("sessionID") && text("startedAt") && !Number.isNaN(Date.parse(String(run.startedAt)))
}

export async function readRun(runsDir: string, id: string): Promise<RunRecord | undefined> {
  if (!RUN_ID.test(id)) return undefined
  const run = await readJson<unknown>(`${runDir(runsDir, id)}/run.json`)
  return isRun(run, id) ? run : undefined
}

export async function listRuns(runsDir: string): Promise<RunRecord[]> {
  // No runs directory yet: no runs.
  const names = await readdir(runsDir).catch(() => [] as string[])
  const runs = await Promise.all(names.filter((name) => RUN_ID.test(name)).map((name) => readRun(runsDir, name)))
  return runs.filter((run): run is RunRecord => run !== undefined)
}

/** How a sandboxed command ended, as the run's record keeps it and its digest's header says. */
export interface RunEnd {
  exitCode: number | null
  timedOut: boolean
  signal?: string | null
  aborted?: boolean
  durationMs?: number
  log?: { bytesSeen: number; bytesWritten: number }
}

/** The digest's header for a run that ended so, its whole output at `log`. */
export const runFacts = (ended: RunEnd, log: string): RunFacts => ({
  exitCode: ended.exitCode,
  signal: ended.signal,
  timedOut: ended.timedOut,
  aborted: ended.aborted,
  durationMs: ended.durationMs,
  logPath: log,
  bytesSeen: ended.log?.bytesSeen,
  bytesKept: ended.log?.bytesWritten,
})

/**
 * A finished run's log read once, line by line, into its digest, and the run's record stamped with how it
 * ended. The runner tool and the verification both end a command this way; each saves the record itself,
 * since only the runner fails when the save does.
 */
export async function digestRun(run: RunRecord, log: string, ended: RunEnd): Promise<Digest> {
  const digester = createDigester()
  await eachLine(log, (line) => digester.push(line))
  const digest = digester.result()
  Object.assign(run, {
    finishedAt: new Date().toISOString(),
    exitCode: ended.exitCode,
    timedOut: ended.timedOut,
    bytesSeen: ended.log?.bytesSeen,
    bytesKept: ended.log?.bytesWritten,
    lines: digest.lines,
  })
  return digest
}

export interface Retention {
  hours: number
  count: number
}

/** Which runs to delete: older than the retention age, then all but the newest `count`. Pure. */
export function runsToPrune(
  runs: readonly Pick<RunRecord, "id" | "startedAt">[],
  retention: Retention,
  now: number,
  keep: readonly string[] = [],
): string[] {
  const newestFirst = [...runs].sort(
    (a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt) || b.id.localeCompare(a.id),
  )
  const cutoff = now - retention.hours * 3_600_000
  return newestFirst
    .filter(
      (run, index) => !keep.includes(run.id) && (index >= retention.count || !(Date.parse(run.startedAt) >= cutoff)),
    )
    .map((run) => run.id)
}

export async function pruneRuns(
  runsDir: string,
  retention: Retention,
  keep: readonly string[] = [],
): Promise<string[]> {
  const doomed = runsToPrune(await listRuns(runsDir), retention, Date.now(), keep)
  for (const id of doomed) await rm(runDir(runsDir, id), { recursive: true, force: true })
  return doomed
}

/** The scheduled pass (engine/retention/sweep.ts): finished runs only, at most `max` removed. */
export async function pruneRunsAt(runsDir: string, retention: Retention, now: number, max: number): Promise<string[]> {
  const runs = await listRuns(runsDir)
  const running = runs.filter((run) => !run.finishedAt).map((run) => run.id)
  const doomed = runsToPrune(runs, retention, now, running).slice(0, max)
  for (const id of doomed) await rm(runDir(runsDir, id), { recursive: true, force: true })
  return doomed
}

/**
 * How much of one line a reader holds: every consumer shows a few hundred characters of a line and
 * matches on 4096 (digest.ts MATCH_CHARS), so a longer line is cut here, before it is joined in memory,
 * and a 200 MB line costs this much, not 200 MB. The full length is still counted and passed on.
 */
export const LINE_MAX_CHARS = 65_536

/**
 * Calls `visit` with each line (1-based number) until it returns false: the line cut at `maxChars`
 * (LINE_MAX_CHARS by default), and its whole length in characters. Only the new chunk is searched for
 * newlines and a line's kept pieces are joined once: splitting `rest + chunk` rescanned the whole line
 * for every chunk, quadratic on a log that is one 128 MB line.
 */
export async function eachLine(
  file: string,
  visit: (line: string, number: number, chars: number) => unknown,
  options: { maxChars?: number } = {},
): Promise<number> {
  const maxChars = options.maxChars ?? LINE_MAX_CHARS
  const decoder = new TextDecoder()
  let pieces: string[] = []
  let kept = 0
  let chars = 0
  let number = 0
  const keep = (piece: string) => {
    chars += piece.length
    if (kept >= maxChars) return
    const part = piece.length > maxChars - kept ? piece.slice(0, maxChars - kept) : piece
    pieces.push(part)
    kept += part.length
  }
  const emit = () => {
    const line = pieces.join("")
    const length = chars
    pieces = []
    kept = 0
    chars = 0
    return visit(line, ++number, length)
  }
  const feed = (text: string) => {
    let start = 0
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      keep(text.slice(start, end))
      start = end + 1
      if (emit() === false) return false
    }
    if (start < text.length) keep(text.slice(start))
    return true
  }
  for await (const chunk of Bun.file(file).stream()) if (!feed(decoder.decode(chunk, { stream: true }))) return number
  feed(decoder.decode())
  if (chars > 0) emit()
  return number
}

export const READ_LIMITS = { lines: 200, lineChars: 500, matches: 60, bytes: 16_000 } as const

const clip = (line: string, chars = line.length) =>
  chars > READ_LIMITS.lineChars ? `${line.slice(0, READ_LIMITS.lineChars)}… [${chars} chars]` : line

/** Lines offset..offset+limit-1, numbered, capped in count and bytes. */
export async function readSlice(file: string, offset: number, limit: number): Promise<string> {
  const first = Math.max(1, Math.floor(offset) || 1)
  const count = Math.min(READ_LIMITS.lines, Math.max(1, Math.floor(limit) || 50))
  const out: string[] = []
  let bytes = 0
  let stoppedAt: number | undefined
  const total = await eachLine(file, (line, number, chars) => {
    if (number < first) return
    if (number >= first + count || bytes > READ_LIMITS.bytes) {
      stoppedAt = number
      return false
    }
    const text = `${number}: ${clip(line, chars)}`
    bytes += text.length + 1
    out.push(text)
  })
  if (!out.length) return `no lines from ${first}: the log has ${total} lines.`
  return stoppedAt
    ? `${out.join("\n")}\n[more from line ${stoppedAt}]`
    : `${out.join("\n")}\n[end of log, ${total} lines]`
}

/** A regular expression (case-insensitive), or the literal text when it is not a valid one. */
export function searchPattern(pattern: string): RegExp {
  if (!pattern) throw fail("Usage", "The search pattern is empty.", "Pass a word or regular expression to look for.")
  try {
    return new RegExp(pattern, "i")
  } catch {
    // Not a valid regular expression: matched as literal text.
    return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i")
  }
}

/**
 * Lines of a log matching a pattern the model wrote. The matching is ripgrep's, whose regex engine is
 * linear in the input: a backtracking JS regex from a model (`(a+)+$`, `.*x.*y.*z`) on one long line
 * would stall the whole OpenCode server this runs in. Only counting lines happens here.
 */
export async function grepLog(file: string, pattern: string): Promise<string> {
  const re = searchPattern(pattern)
  const search = async (literal: boolean) => {
    const rg = (...flags: string[]) => [
      "rg",
      "--no-config",
      "-i",
      "-a",
      "--color=never",
      ...flags,
      ...(literal ? ["-F"] : []),
      "-e",
      pattern,
      "--",
      file,
    ]
    const [count, lines] = await Promise.all([
      run(rg("-c"), { timeoutMs: 30_000 }),
      run(
        rg(
          "-n",
          "--no-filename",
          `--max-count=${READ_LIMITS.matches}`,
          `--max-columns=${READ_LIMITS.lineChars}`,
          "--max-columns-preview",
        ),
        {
          timeoutMs: 30_000,
          maxOutputBytes: READ_LIMITS.bytes * 2,
        },
      ),
    ])
    return { count, lines }
  }
  // A pattern ripgrep's syntax does not take (a JS lookahead, say) is searched as literal text, as an invalid one is.
  let found = await search(re.source !== pattern)
  if (found.count.code === 2 && re.source === pattern) found = await search(true)
  if (found.count.code === 127 || /not found/i.test(found.count.stderr))
    throw fail(
      "Prerequisite",
      "ripgrep (rg) is needed to search logs and was not found.",
      "Install ripgrep (apt-get install ripgrep).",
    )
  const total = await eachLine(file, () => {})
  const matches = Number(found.count.stdout.trim()) || 0
  if (!matches) return `no line of ${total} matches ${re}.`
  const out: string[] = []
  let bytes = 0
  for (const line of found.lines.stdout.split("\n").filter(Boolean)) {
    const colon = line.indexOf(":")
    const text = `${line.slice(0, colon)}: ${clip(line.slice(colon + 1))}`
    if (out.length >= READ_LIMITS.matches || bytes >= READ_LIMITS.bytes) break
    bytes += text.length + 1
    out.push(text)
  }
  return (
    `${matches} of ${total} lines match ` +
    `${re}${matches > out.length ? ` (first ${out.length} shown)` : ""}:\n${out.join("\n")}`
  )
}

/** The newest run any of these sessions made (a task's sessions), for the parent's result. */
export async function latestRunOf(runsDir: string, sessionIDs: readonly string[]): Promise<RunRecord | undefined> {
  const runs = (await listRuns(runsDir)).filter((run) => sessionIDs.includes(run.sessionID))
  return runs.sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))[0]
}

/** The latest run of these sessions as a result carries it: exit code, log path, line count. */
export async function runOf(runsDir: string, sessionIDs: readonly string[]) {
  const run = await latestRunOf(runsDir, sessionIDs)
  if (!run) return undefined
  return {
    exitCode: run.exitCode ?? null,
    log: logPath(runsDir, run.id),
    timedOut: Boolean(run.timedOut),
    lines: run.lines,
  }
}
