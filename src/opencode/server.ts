// The shared OpenCode server: found (a healthy one this program started, recorded in the state dir)
// or started (`opencode serve` on loopback, random port, random password), and reused across tasks
// and across MCP server processes. A slow one is waited out; a gone one is replaced on the next call;
// a process that is not provably ours (PID, start time, password) is never signalled.
import { randomBytes } from "node:crypto"
import { mkdir, rm } from "node:fs/promises"
import { readFileSync } from "node:fs"
import { searchPath, type Env } from "../config/flags"
import type { Paths } from "../config/paths"
import { fail } from "../errors"
import { neutralStandIn } from "../sandbox/stand-ins"
import { z } from "zod"
import { makePrivate, writeJson } from "../util/fs"
import { withStartLock } from "./start-lock"
import { readStateFile } from "../util/state-file"
import { SHARED_SERVER_VARIABLE } from "../sandbox"
import { alive, killPid, processStart, sameProcess, selfStart, spawn, type Spawned } from "../util/process"

export interface ServerRecord {
  pid: number
  /** The server process's boot and start time (util/process.ts): a reused PID is never taken for it. */
  start?: string
  url: string
  username: string
  password: string
  version: string
  binary: string
  startedAt: string
  /**
   * The process stopping this server (a recycle), written before the first signal: nobody reuses a
   * server that is going away, and a stop whose process died midway is finished (or, the server not
   * yet signalled, undone) by the next process that looks (usableRecord).
   */
  stopping?: { pid: number; start?: string }
}

/**
 * How long a starting `opencode serve` is given to listen. Measured 2026-12-05: 36 s on a 2-core machine
 * at a load average of 20 (30 s refused such a start). Under the start lock's 60 s, after which another
 * process takes the lock as stale.
 */
const START_TIMEOUT_MS = 55_000

/** The steps of a stop, in order, each one a point a SIGKILL of the stopping process may fall on. */
export const STOP_STEPS = ["locked", "marked", "signalled", "stopped", "forgotten"] as const
export type StopStep = (typeof STOP_STEPS)[number]

export interface ServerOptions {
  paths: Paths
  /** Name or path of the opencode executable. */
  binary: string
  env: Env
  startTimeoutMs?: number
}

const USERNAME = "opencode"

/**
 * What makes the shared server ours alone. Project config (a repository's opencode.json tools, agents,
 * MCP servers, formatters, LSPs; CLAUDE.md and .claude skills) is not loaded; formatters and LSPs are
 * off globally (they start programs on the host after a write); and our plugin, seeing the marker
 * variable, replaces OpenCode's host-side file tools with sandboxed ones. Project plugin files are
 * still imported by OpenCode whatever these say: admission refuses workspaces that have them.
 * OpenCode's own snapshots are off: at every step they `git add` the session's directory into a
 * repository under its data dir, for an undo this program never calls; a task's changes are read from
 * our git snapshots (src/workspace). Measured (scripts/bench.ts, j): the delegation's CPU in OpenCode.
 */
export const SHARED_SERVER_ENV = {
  [SHARED_SERVER_VARIABLE]: "1",
  OPENCODE_DISABLE_PROJECT_CONFIG: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_CONFIG_CONTENT: JSON.stringify({ formatter: false, lsp: false, snapshot: false }),
}

export const authHeader = (record: Pick<ServerRecord, "username" | "password">) =>
  `Basic ${Buffer.from(`${record.username}:${record.password}`).toString("base64")}`

/** The server's version when it answers its health check with our password, else undefined. */
export async function health(record: Pick<ServerRecord, "url" | "username" | "password">, timeoutMs = 2000) {
  try {
    const response = await fetch(`${record.url}/global/health`, {
      headers: { authorization: authHeader(record) },
      signal: AbortSignal.timeout(timeoutMs),
    })
    if (!response.ok) return undefined
    const body = (await response.json()) as { healthy?: boolean; version?: string }
    return body.healthy ? (body.version ?? "unknown") : undefined
  } catch {
    // No answer, or not a health answer: no healthy server there.
    return undefined
  }
}

const ServerRecordSchema = z.looseObject({
  pid: z.number().int().positive(),
  start: z.string().optional(),
  url: z.url({ protocol: /^https?$/ }),
  username: z.string(),
  password: z.string(),
  version: z.string(),
  binary: z.string(),
  startedAt: z.string(),
  stopping: z.looseObject({ pid: z.number().int(), start: z.string().optional() }).optional(),
})

/** The recorded shared server; a bad record is set aside, and a new server is then started as if none ran. */
export async function readServerRecord(paths: Paths): Promise<ServerRecord | undefined> {
  const fix =
    "A new shared server is started on the next call; one the bad record named, if it still runs, is left alone."
  return readStateFile(paths.serverFile, ServerRecordSchema, fix)
}

export type ServerState = "healthy" | "slow" | "foreign" | "gone"

/**
 * What the recorded server is now. `gone`: its process (that PID with that start time) no longer runs.
 * `foreign`: something answers on the port but not to our password. `slow`: our process is alive but
 * did not answer in time (a stall, a busy event loop, SIGSTOP) — never a reason to kill it at once.
 */
export async function probeServer(record: ServerRecord, timeoutMs = 2000): Promise<ServerState> {
  if (!alive(record.pid)) return "gone"
  // Only a process with the recorded start time can be "slow" (and, past the liveness window, stopped);
  // a record without one is trusted only when the server answers to its password.
  const provable = record.start !== undefined && isServerProcess(record)
  try {
    const response = await fetch(`${record.url}/global/health`, {
      headers: { authorization: authHeader(record) },
      signal: AbortSignal.timeout(timeoutMs),
    })
    if (response.status === 401) return "foreign"
    // A body that is not JSON is not a healthy answer.
    const body = (await response.json().catch(() => ({}))) as { healthy?: boolean }
    if (response.ok && body.healthy) return "healthy"
  } catch {
    // No answer in time: slow while its process provably lives, else gone (below).
  }
  return provable ? "slow" : "gone"
}

/** How long a live but silent server is waited out before it counts as hung and is replaced. */
const LIVENESS_WINDOW_MS = 45_000

/**
 * A recorded server a stop was under way on when its stopping process died (the mark names a process
 * that is gone). Under the start lock. A server still answering was never signalled: the mark is
 * dropped and the server reused. One that does not answer is going away: the stop is finished (its
 * process, provably ours, ended) and the record forgotten, so a new server is started at once rather
 * than after the liveness window.
 */
async function finishStop(paths: Paths, record: ServerRecord): Promise<ServerRecord | undefined> {
  if ((await probeServer(record)) === "healthy") {
    const { stopping: _, ...kept } = record
    await writeJson(paths.serverFile, kept, 0o600)
    return kept
  }
  if (isServerProcess(record)) await killPid(record.pid, 3000)
  await rm(paths.serverFile, { force: true })
  return undefined
}

/**
 * The recorded server once it answers; undefined when there is none to use. A slow one is waited out
 * for the liveness window, then (being provably ours) stopped; a foreign or gone one is left alone. A
 * server being stopped is never used: while its stopper lives it holds the start lock (ensureServer
 * waits there); once it is gone, the stop is finished or undone under the lock (`locked`).
 */
async function usableRecord(paths: Paths, locked = false): Promise<ServerRecord | undefined> {
  const record = await readServerRecord(paths)
  if (!record) return undefined
  if (record.stopping) {
    if (!locked || sameProcess(record.stopping.pid, record.stopping.start)) return undefined
    return finishStop(paths, record)
  }
  const deadline = Date.now() + LIVENESS_WINDOW_MS
  for (let state = await probeServer(record); ; state = await probeServer(record)) {
    if (state === "healthy") return record
    if (state !== "slow") return undefined
    if (Date.now() > deadline) {
      await killPid(record.pid)
      return undefined
    }
    await Bun.sleep(500)
  }
}

/** Returns a healthy shared server, starting one if needed. Safe to call from several processes at once. */
export async function ensureServer(options: ServerOptions): Promise<ServerRecord> {
  const existing = await usableRecord(options.paths)
  if (existing) return existing
  return withStartLock(options.paths, async () => (await usableRecord(options.paths, true)) ?? startServer(options))
}

export function resolveBinary(binary: string, env: Env): string {
  const found = binary.includes("/") ? binary : Bun.which(binary, { PATH: searchPath(env) })
  if (!found)
    throw fail(
      "Prerequisite",
      `The OpenCode executable "${binary}" was not found on PATH.`,
      "Install it (npm install -g opencode-ai) or set OPENCODE_MCP_ORCHESTRATOR_OPENCODE to its path.",
    )
  return found
}

async function startServer(options: ServerOptions): Promise<ServerRecord> {
  const binary = resolveBinary(options.binary, options.env)
  await mkdir(options.paths.stateDir, { recursive: true, mode: 0o700 })
  const password = randomBytes(24).toString("base64url")
  await Bun.write(options.paths.serverLog, "")
  // OpenCode's database and snapshot repositories hold copies of workspace files (`.env` included) and
  // are created world-readable by default: what exists is made private, and the server creates the rest so.
  for (const dir of [options.paths.opencodeDataDir, options.paths.opencodeStateDir]) await makePrivate(dir)
  // Its working directory is ours: a request naming no directory would load an instance there, and the
  // directory serve was started in (a project, where an agent may have planted plugin code) is not.
  const where = neutralStandIn(options.paths.opencodeDirsDir)
  let child: Spawned
  try {
    child = spawn([binary, "serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs", "--log-level", "WARN"], {
      cwd: where,
      env: {
        ...options.env,
        ...SHARED_SERVER_ENV,
        OPENCODE_SERVER_USERNAME: USERNAME,
        OPENCODE_SERVER_PASSWORD: password,
      },
      detached: true,
      logFile: options.paths.serverLog,
      umask: 0o077,
    })
  } catch (error) {
    throw fail(
      "Prerequisite",
      `Could not start ${binary}: ${(error as Error).message}`,
      "Check that the OpenCode executable runs: opencode --version.",
    )
  }
  const url = await waitForUrl(options.paths.serverLog, child.exited, options.startTimeoutMs ?? START_TIMEOUT_MS)
  if (!url) {
    await child.kill(1000)
    const log = (await Bun.file(options.paths.serverLog).text()).trim().split("\n").slice(-5).join("\n")
    throw fail(
      "Server",
      `OpenCode did not start listening:\n${log}`,
      `See ${options.paths.serverLog}; run \`opencode serve\` by hand to see why.`,
    )
  }
  const record: ServerRecord = {
    pid: child.pid,
    start: processStart(child.pid),
    url,
    username: USERNAME,
    password,
    version: "",
    binary,
    startedAt: new Date().toISOString(),
  }
  record.version = (await health(record, 10_000)) ?? ""
  if (!record.version) {
    await child.kill(1000)
    throw fail("Server", `OpenCode at ${url} does not answer its health check.`, `See ${options.paths.serverLog}.`)
  }
  await writeJson(options.paths.serverFile, record, 0o600)
  return record
}

async function waitForUrl(logFile: string, exited: Promise<number>, timeoutMs: number) {
  let done = false
  exited.then(() => (done = true))
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const match = (await Bun.file(logFile).text()).match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
    if (match) return match[1]
    if (done) return undefined
    await Bun.sleep(25)
  }
  return undefined
}

/**
 * True when the recorded PID is still that `opencode serve`: the record outlives reboots, and a PID
 * reused by an unrelated process must never be signalled.
 */
function isServerProcess(record: Pick<ServerRecord, "pid" | "binary" | "start">): boolean {
  if (!alive(record.pid)) return false
  // A record written with the server's start time must match it exactly (older records fall back to the command line).
  if (record.start !== undefined && processStart(record.pid) !== record.start) return false
  try {
    const argv = readFileSync(`/proc/${record.pid}/cmdline`, "utf8").split("\0")
    return (
      argv.includes("serve") &&
      argv.some((arg) => arg === record.binary || arg.endsWith("/opencode") || arg.endsWith("opencode.exe"))
    )
  } catch {
    // The process left (or /proc is unreadable): it is not our server.
    return false
  }
}

/**
 * Stops `record`'s server and forgets it, if it is still the recorded one and provably ours (a rested
 * server being recycled); under the start lock, so no process starts or records another meanwhile.
 * The record is marked as stopping before the first signal, so a SIGKILL at any step leaves what the
 * next process finishes or undoes (usableRecord). `step` is called after each step (tests stop there).
 */
export async function stopServerIfRecorded(
  paths: Paths,
  record: ServerRecord,
  options: { step?: (step: StopStep) => Promise<void> } = {},
): Promise<boolean> {
  const step = options.step ?? (async () => undefined)
  return withStartLock(paths, async () => {
    await step("locked")
    const current = await readServerRecord(paths)
    const same = current?.pid === record.pid && current.start === record.start && current.password === record.password
    if (!same || !isServerProcess(record)) return false
    await writeJson(paths.serverFile, { ...current, stopping: { pid: process.pid, start: selfStart() } }, 0o600)
    await step("marked")
    try {
      process.kill(record.pid, "SIGTERM")
    } catch {
      // Gone already: killPid below finds nothing to stop.
    }
    await step("signalled")
    await killPid(record.pid, 3000)
    await step("stopped")
    await rm(paths.serverFile, { force: true })
    await step("forgotten")
    return true
  })
}

/** Stops the recorded shared server (tests, `doctor`, uninstall) and forgets it. */
export async function stopServer(paths: Paths): Promise<void> {
  const record = await readServerRecord(paths)
  if (record && isServerProcess(record)) await killPid(record.pid, 3000)
  await rm(paths.serverFile, { force: true })
}
