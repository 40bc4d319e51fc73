import { readFileSync } from "node:fs"
import { fail } from "../errors"

// The one place that starts processes. Argument arrays only (never a shell string), an optional
// abort signal and timeout, SIGTERM then SIGKILL, and stderr kept for the error message.

export interface RunOptions {
  cwd?: string
  env?: Record<string, string | undefined>
  stdin?: string | Uint8Array
  timeoutMs?: number
  signal?: AbortSignal
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs?: number
  /** Bytes kept of each of stdout and stderr; the rest is counted, not stored. */
  maxOutputBytes?: number
  /** Sees every chunk as it arrives, before the cap (a log file keeps more than the result does). */
  onOutput?: (chunk: Uint8Array, stream: "stdout" | "stderr") => void
}

export interface RunResult {
  code: number | null
  signal: string | null
  stdout: string
  stderr: string
  timedOut: boolean
  aborted: boolean
  truncated: boolean
  durationMs: number
}

/** The shape of `run`, for the deps objects that take it (tests hand in fakes with the same signature). */
export type Run = (argv: string[], options?: RunOptions) => Promise<RunResult>

async function collect(stream: ReadableStream<Uint8Array>, limit: number, onChunk?: (chunk: Uint8Array) => void) {
  const chunks: Uint8Array[] = []
  let kept = 0
  let total = 0
  for await (const chunk of stream) {
    onChunk?.(chunk)
    total += chunk.byteLength
    if (kept >= limit) continue
    const slice = chunk.subarray(0, limit - kept)
    chunks.push(slice)
    kept += slice.byteLength
  }
  return { text: Buffer.concat(chunks).toString("utf8"), truncated: total > kept }
}

function cleanEnv(env: Record<string, string | undefined> | undefined) {
  if (!env) return undefined
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value
  return out
}

/** Starts the process; an executable that is missing is a named prerequisite error, not a crash. */
function launch<T>(argv: string[], start: () => T): T {
  try {
    return start()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const missing = code === "ENOENT" || /not found/i.test((error as Error).message)
    if (!missing) throw error
    throw fail(
      "Prerequisite",
      `The program "${argv[0]}" was not found${argv[0]?.includes("/") ? "" : " on PATH"}.`,
      `Install it, or check PATH for the process that runs opencode-mcp-orchestrator.`,
    )
  }
}

/**
 * Runs `start` with the process's file-creation mask set to `mask`: a child inherits it at fork, and a spawn is
 * synchronous.
 */
function withUmask<T>(mask: number | undefined, start: () => T): T {
  if (mask === undefined) return start()
  const previous = process.umask(mask)
  try {
    return start()
  } finally {
    process.umask(previous)
  }
}

/** Runs a command to completion and returns what it printed. Never throws for a non-zero exit. */
export async function run(argv: string[], options: RunOptions = {}): Promise<RunResult> {
  const started = performance.now()
  const limit = options.maxOutputBytes ?? 16 * 1024 * 1024
  const proc = launch(argv, () =>
    Bun.spawn(argv, {
      cwd: options.cwd,
      env: cleanEnv(options.env),
      stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
      stdout: "pipe",
      stderr: "pipe",
    }),
  )
  let timedOut = false
  let aborted = false
  const stop = () => terminate(proc, options.killGraceMs ?? 2000)
  const timer = options.timeoutMs
    ? setTimeout(() => {
        timedOut = true
        stop()
      }, options.timeoutMs)
    : undefined
  const onAbort = () => {
    aborted = true
    stop()
  }
  if (options.signal?.aborted) onAbort()
  options.signal?.addEventListener("abort", onAbort, { once: true })
  const tap = options.onOutput
  const [out, err] = await Promise.all([
    collect(proc.stdout, limit, tap && ((chunk) => tap(chunk, "stdout"))),
    collect(proc.stderr, limit, tap && ((chunk) => tap(chunk, "stderr"))),
  ])
  await proc.exited
  if (timer) clearTimeout(timer)
  options.signal?.removeEventListener("abort", onAbort)
  return {
    code: proc.exitCode,
    signal: proc.signalCode === null ? null : String(proc.signalCode),
    stdout: out.text,
    stderr: err.text,
    timedOut,
    aborted,
    truncated: out.truncated || err.truncated,
    durationMs: performance.now() - started,
  }
}

export interface Spawned {
  pid: number
  exited: Promise<number>
  stdout: ReadableStream<Uint8Array>
  stderr: ReadableStream<Uint8Array>
  /** Present when started with `stdin: "pipe"`. */
  stdin?: import("bun").FileSink
  kill(graceMs?: number): Promise<void>
}

export interface SpawnOptions {
  cwd?: string
  env?: Record<string, string | undefined>
  /** Start in a new session so the child outlives this process (shared servers). */
  detached?: boolean
  /** Send output to this file instead of pipes. */
  logFile?: string
  /** A pipe to write to (a protocol peer); nothing by default. */
  stdin?: "pipe" | "ignore"
  /** The child's file-creation mask (0o077: what it creates is its owner's alone); this process's own by default. */
  umask?: number
}

/** Starts a long-running process (a server) and hands back its handle. */
export function spawn(argv: string[], options: SpawnOptions = {}): Spawned {
  const output = options.logFile ? Bun.file(options.logFile) : "pipe"
  const proc = withUmask(options.umask, () =>
    launch(argv, () =>
      Bun.spawn(argv, {
        cwd: options.cwd,
        env: cleanEnv(options.env),
        stdin: options.stdin ?? "ignore",
        stdout: output,
        stderr: output,
        detached: options.detached ?? false,
      }),
    ),
  )
  if (options.detached) proc.unref()
  return {
    pid: proc.pid,
    exited: proc.exited,
    stdout: proc.stdout as ReadableStream<Uint8Array>,
    stderr: proc.stderr as ReadableStream<Uint8Array>,
    stdin: options.stdin === "pipe" ? (proc.stdin as import("bun").FileSink) : undefined,
    kill: (graceMs = 2000) => terminate(proc, graceMs),
  }
}

/**
 * Runs a program on this terminal (a full-screen UI) until it exits; its exit code. Stdio is inherited, and
 * the environment is the child's alone: what it carries (a password) never appears in argv.
 */
export async function interactive(
  argv: string[],
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<number> {
  const proc = launch(argv, () =>
    Bun.spawn(argv, {
      cwd: options.cwd,
      env: cleanEnv(options.env),
      stdin: "inherit",
      stdout: "inherit",
      stderr: "inherit",
    }),
  )
  return proc.exited
}

async function terminate(
  proc: { pid: number; exited: Promise<number>; kill(signal?: number | string): void },
  graceMs: number,
) {
  try {
    proc.kill("SIGTERM")
  } catch {
    // Already exited: nothing to stop.
    return
  }
  const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)])
  if (done) return
  try {
    proc.kill("SIGKILL")
  } catch {
    // Exited during the grace period: nothing to kill.
  }
  await proc.exited
}

/** True when a process with this PID exists and has not exited (a zombie counts as gone). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  // A killed child that its parent has not reaped yet still answers signal 0; /proc says "Z".
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    // No /proc entry to read: signal 0 answered, so it counts as alive.
    return true
  }
}

let bootId: string | undefined
/**
 * What tells one process from a later one that reuses its PID: the boot and the start time (in clock
 * ticks since boot, /proc/<pid>/stat field 22). Undefined when the process does not exist.
 */
export function processStart(pid: number): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  try {
    bootId ??= readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the parenthesised command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return `${bootId}:${fields[19]}`
  } catch {
    // Gone, or no /proc: no start identity.
    return undefined
  }
}

/** This process's identity, for the records and locks it owns. */
export const selfStart = () => processStart(process.pid)

/** True only when `pid` is alive and is the very process that recorded `start` (not a reused PID). */
export const sameProcess = (pid: number, start: string | undefined) =>
  start !== undefined && alive(pid) && processStart(pid) === start

/** Stops a process we only know by PID (recorded in the state dir): SIGTERM, wait, SIGKILL. */
export async function killPid(pid: number, graceMs = 2000): Promise<void> {
  if (!alive(pid)) return
  try {
    process.kill(pid, "SIGTERM")
  } catch {
    // Already exited: nothing to stop.
    return
  }
  const deadline = Date.now() + graceMs
  while (Date.now() < deadline) {
    if (!alive(pid)) return
    await Bun.sleep(25)
  }
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // Exited during the grace period: nothing to kill.
  }
}
