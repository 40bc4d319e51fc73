// Runs one command in a planned sandbox: the only place that starts bwrap. bwrap itself gets an empty
// environment, because `--clearenv` only clears the command's: bwrap's own environment stays readable
// at /proc/1/environ inside the sandbox (containers/bubblewrap#725). The timeout kills bwrap, and
// `--die-with-parent` with the pid namespace takes every process the command left behind with it.
import { fail } from "../errors"
import { run, type RunResult } from "../util/process"
import { bwrapArgs, BWRAP } from "./argv"
import { BWRAP_FIX, classifyBwrapFailure, type BwrapFailure } from "./bwrap"
import type { SandboxPlan } from "./plan"

export interface SandboxRunOptions {
  timeoutMs: number
  /** Bytes kept of each of stdout and stderr in the result. */
  maxOutputBytes: number
  signal?: AbortSignal
  /** Also write stdout and stderr, interleaved as they arrive, to this file (the runner's log). */
  logFile?: string
  /** Bytes the log keeps, head and tail; a line between them says how many were cut from the middle. */
  logLimitBytes?: number
  /** Bytes fed to the command's standard input (the file tools' writes, the verification's frozen files). */
  stdin?: string | Uint8Array
  /** For tests and doctor: another bwrap binary. Production always uses /usr/bin/bwrap. */
  bwrap?: string
}

/** The process wrapper's result, with the exit code named for the command inside the sandbox. */
export interface SandboxRunResult extends Omit<RunResult, "code"> {
  exitCode: number | null
  /** Set when bwrap could not build the sandbox (the command never ran). */
  failure?: BwrapFailure
  log?: { path: string; bytesWritten: number; bytesSeen: number }
}

/**
 * The most of a log's end kept in memory until the command ends: the tail is where a test run prints its
 * summary and a crash its trace, and a ring of it is the only copy of output this process holds.
 */
const LOG_TAIL_BYTES = 1_048_576

/**
 * A log of at most `limit` bytes of output: the head as it comes, the last bytes (up to LOG_TAIL_BYTES,
 * at most half the limit) in a ring written at the end, and between them a line saying how many bytes
 * were cut. Memory holds the ring at most, whatever the command prints.
 */
function logWriter(path: string, limit: number) {
  const sink = Bun.file(path).writer()
  const tailLimit = Math.min(LOG_TAIL_BYTES, Math.floor(limit / 2))
  const headLimit = limit - tailLimit
  let head = 0
  let seen = 0
  const tail: Uint8Array[] = []
  let tailBytes = 0
  return {
    write(chunk: Uint8Array) {
      seen += chunk.byteLength
      if (head < headLimit) {
        const slice = chunk.subarray(0, headLimit - head)
        sink.write(slice)
        head += slice.byteLength
        chunk = chunk.subarray(slice.byteLength)
      }
      if (!chunk.byteLength || !tailLimit) return
      // Copied: the pipe may reuse its buffer. Whole chunks leave the ring once the rest still fills it.
      tail.push(chunk.slice())
      tailBytes += chunk.byteLength
      while (tail.length > 1 && tailBytes - tail[0]!.byteLength >= tailLimit) tailBytes -= tail.shift()!.byteLength
    },
    async close() {
      const over = Math.max(0, tailBytes - tailLimit)
      const cut = seen - head - (tailBytes - over)
      if (cut > 0)
        sink.write(`\n[log cut: ${cut} bytes cut here; the first ${head} and the last ${tailBytes - over} kept]\n`)
      let skip = over
      for (const chunk of tail) {
        sink.write(skip ? chunk.subarray(Math.min(skip, chunk.byteLength)) : chunk)
        skip = Math.max(0, skip - chunk.byteLength)
      }
      await sink.end()
      return { path, bytesWritten: head + tailBytes - over, bytesSeen: seen }
    },
  }
}

export async function runSandboxed(
  plan: SandboxPlan,
  command: readonly string[],
  options: SandboxRunOptions,
): Promise<SandboxRunResult> {
  const log = options.logFile ? logWriter(options.logFile, options.logLimitBytes ?? Number.MAX_SAFE_INTEGER) : undefined
  const bwrap = options.bwrap ?? BWRAP
  // bwrap sets no rlimits: bash sets them (soft and hard, so the command cannot raise them) and execs
  // the command. RLIMIT_NPROC is not enforced for root; the pid namespace and the timeout still bound it.
  const capped = [
    "/bin/bash",
    "-c",
    `${pinCheck(plan.pins ?? [])}ulimit -f ${Math.floor(plan.caps.fileMaxBytes / 1024)} -u ` +
      `${plan.caps.maxProcesses} || exit 126; exec "$@"`,
    "sandbox",
    ...command,
  ]
  const result = await run([bwrap, ...bwrapArgs(plan, capped)], {
    env: {},
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    maxOutputBytes: options.maxOutputBytes,
    stdin: options.stdin,
    // SIGTERM kills bwrap outright (it installs no handler); the grace only matters if it ever did.
    killGraceMs: 500,
    onOutput: log && ((chunk) => log.write(chunk)),
  }).catch(async (error: unknown) => {
    await log?.close()
    throw fail(
      "Prerequisite",
      `${bwrap} could not be started: ${error instanceof Error ? error.message : String(error)}.`,
      BWRAP_FIX,
    )
  })
  const failure =
    result.code === 1
      ? classifyBwrapFailure(result.stderr)
      : result.code === 126 || result.code === 127
        ? execFailure(result.stderr)
        : result.code === PIN_EXIT
          ? pinFailure(result.stderr)
          : undefined
  return {
    exitCode: result.code,
    signal: result.signal,
    stdout: result.stdout,
    stderr: result.stderr,
    timedOut: result.timedOut,
    aborted: result.aborted,
    truncated: result.truncated,
    durationMs: result.durationMs,
    ...(failure ? { failure } : {}),
    ...(log ? { log: await log.close() } : {}),
  }
}

/** The exit code of the pin check: a mount was not what the plan checked (see SandboxPlan.pins). */
const PIN_EXIT = 125
const PIN_MARK = "sandbox: mount changed:"
const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`

/**
 * Shell that exits PIN_EXIT, naming the path, when a pinned mount's `device:inode` differs inside. One
 * stat for all of them; only on a mismatch one per path, to name it.
 */
function pinCheck(pins: readonly { path: string; id: string }[]): string {
  if (!pins.length) return ""
  const paths = pins.map((pin) => quote(pin.path)).join(" ")
  const each = pins
    .map(
      ({ path, id }) =>
        `[ "$("$s" -c %d:%i -- ${quote(path)} 2>&1)" = ${quote(id)} ] || echo "${PIN_MARK} "${quote(path)} >&2; `,
    )
    .join("")
  // stat by absolute path: a `stat` earlier on the sandbox's PATH must not answer for it. --printf keeps
  // the script one line (the limits wrapper's exec errors are parsed as `line 1`).
  return (
    `s=/usr/bin/stat; [ -x "$s" ] || s=/bin/stat; if [ "$("$s" --printf '%d:%i ' -- ${paths} 2>&1)" != ` +
    `${quote(pins.map((pin) => `${pin.id} `).join(""))} ]; then ${each}exit ${PIN_EXIT}; fi; `
  )
}

function pinFailure(stderr: string): BwrapFailure | undefined {
  const line = stderr.split("\n").find((l) => l.startsWith(PIN_MARK))
  if (!line) return undefined
  return {
    code: "mount-failed",
    detail:
      `${line.slice(PIN_MARK.length).trim()} changed between the sandbox's check and its mount (it was ` +
      `swapped while the sandbox started)`,
    hint: "Nothing ran. Check who is replacing that path (a delegated agent's process?), then retry.",
  }
}

/** The limits wrapper's `exec` could not start the command: the same failure bwrap's execvp reports. */
function execFailure(stderr: string): BwrapFailure | undefined {
  const match =
    /^sandbox: line 1: (?:exec: )?(.*): (No such file or directory|not found|Permission denied|cannot execute.*)$/.exec(
      stderr.split("\n")[0] ?? "",
    )
  if (!match) return undefined
  return classifyBwrapFailure(
    `bwrap: execvp ${match[1]}: ` +
      `${match[2] === "Permission denied" ? "Permission denied" : "No such file or directory"}`,
  )
}

/** `/usr/bin/bwrap --version`, parsed by the caller; undefined output when it cannot run at all. */
export async function readBwrapVersion(bwrap = BWRAP): Promise<string | undefined> {
  try {
    const result = await run([bwrap, "--version"], { env: {}, timeoutMs: 5000 })
    return result.code === 0 ? result.stdout : undefined
  } catch {
    // No bwrap, or it cannot run: no version, which the caller reports.
    return undefined
  }
}
