// File access for the replaced built-in tools, done inside bwrap: the kernel's mount namespace, not a
// path check on the host, decides what a path reaches. A symlink a sandboxed command swaps in between
// a check and a use resolves inside the sandbox, where HOME, the state dir and every credential store
// do not exist, and where only a worker's workspace is writable (its Git metadata read-only); a scoped
// worker's writes get the mounts its sandbox_shell gets, only the scope writable, so a link inside the
// scope that leads out of it meets a read-only file system, whichever tool follows it.
import { relative } from "node:path"
import {
  admitWorkspace,
  autorunHitIn,
  autorunWrite,
  describeHit,
  hostFs,
  repositoryPrefixes,
  planSandbox,
  runSandboxed,
  type AdmissionPolicy,
  type HostContext,
  type SandboxRunResult,
} from "../../src/sandbox"
import { autorunRefusal } from "../guards"

export interface FileAccess {
  workspace: string
  /** The directory OpenCode knows the workspace by (src/sandbox/stand-ins.ts), when it is not the workspace. */
  standIn?: string
  host: HostContext
  policy: AdmissionPolicy
  signal: AbortSignal
  /** Writes happen only for the worker (and fail on the read-only profile otherwise). */
  writable: boolean
  /** A scoped worker's scope (empty when its session's scope could not be read); absent when unscoped. */
  scope?: readonly string[]
}

export class FileError extends Error {
  override readonly name = "FileError"
}

/** Reads and searches finish quickly or are stopped: a FIFO or a huge tree must not hold the session. */
const IO_TIMEOUT_MS = 20_000
/** The most a read tool takes of one file; the built-in reads whole files, but a model never needs more. */
const MAX_FILE_BYTES = 10 * 1024 * 1024

const BASH = "/bin/bash"

interface Run {
  write: boolean
  script: string
  args: string[]
  stdin?: string
  /** The file a write creates when it is missing (absolute): bound for this run if the scope names it. */
  creating?: string
}

async function sandboxed(access: FileAccess, { write, script, args, stdin, creating }: Run): Promise<SandboxRunResult> {
  // Admission again, on the session's directory: the plugin never trusts that the caller checked.
  const workspace = admitWorkspace(access.workspace, access.host, access.policy, hostFs)
  const scope = write ? access.scope : undefined
  const request = { profile: { kind: write ? "worker" : "scout" } as const, workspace, host: access.host }
  const plan = planSandbox(
    scope ? { ...request, scope, creating: creating && relative(workspace, creating) } : request,
    hostFs,
  )
  const result = await runSandboxed(plan, [BASH, "-c", script, "file-tool", ...args], {
    timeoutMs: IO_TIMEOUT_MS,
    maxOutputBytes: MAX_FILE_BYTES + 1,
    signal: access.signal,
    stdin,
  })
  if (result.failure)
    throw new FileError(
      `The sandbox could not start (${result.failure.code}): ${result.failure.detail}\n${result.failure.hint}`,
    )
  if (result.timedOut)
    throw new FileError(`The file operation did not finish within ${IO_TIMEOUT_MS / 1000}s and was stopped.`)
  if (result.aborted) throw new FileError("Cancelled.")
  return result
}

// Exit codes the scripts below use to say what is at a path, as seen inside the sandbox.
const MISSING = 20
const DIRECTORY = 21
const SPECIAL = 22

const KIND_CHECK =
  `f=$1; if [ -d "$f" ]; then exit ${DIRECTORY}; elif [ ! -e "$f" ]; then exit ${MISSING}; ` +
  `elif [ ! -f "$f" ]; then exit ${SPECIAL}; fi`

export type ReadOutcome =
  | { kind: "file"; text: string; truncated: boolean }
  | { kind: "dir"; entries: string[] }
  | { kind: "missing" }

/**
 * A file's text (at most MAX_FILE_BYTES) or a directory's entries. dd opens with O_NONBLOCK, so a FIFO
 * swapped in after the regular-file check reads as empty instead of blocking.
 */
export async function readPath(access: FileAccess, path: string): Promise<ReadOutcome> {
  const listing = KIND_CHECK.replace(`exit ${DIRECTORY}`, `ls -1Ap -- "$f"; exit ${DIRECTORY}`)
  const script = `${listing}; exec dd if="$f" iflag=nonblock,count_bytes count=$2 bs=65536 status=none`
  const result = await sandboxed(access, { write: false, script, args: [path, String(MAX_FILE_BYTES + 1)] })
  if (result.exitCode === MISSING) return { kind: "missing" }
  if (result.exitCode === DIRECTORY) return { kind: "dir", entries: result.stdout.split("\n").filter(Boolean) }
  if (result.exitCode === SPECIAL)
    throw new FileError(`${path} is not a regular file (a device, socket or pipe); it is not read.`)
  if (result.exitCode !== 0)
    throw new FileError(`Could not read ${path}: ${result.stderr.trim() || `exit ${result.exitCode}`}`)
  const truncated = Buffer.byteLength(result.stdout) > MAX_FILE_BYTES
  return {
    kind: "file",
    text: truncated ? Buffer.from(result.stdout).subarray(0, MAX_FILE_BYTES).toString("utf8") : result.stdout,
    truncated,
  }
}

/**
 * Refuses a write (or, `content` undefined, a deletion) of a file that runs or instructs on its own,
 * whatever tool asked: by name, or for a manifest by what the change does to its install-time part.
 * The guards refuse by name first; the engine's scan is what holds if a path is swapped after this.
 */
export async function refuseAutorun(access: FileAccess, path: string, content: string | undefined, tool: string) {
  const name = relative(access.workspace, path)
  const prefix = repositoryPrefixes(access.workspace, hostFs)
  const hit = autorunHitIn(prefix, name)
  if (!hit) return
  if (hit.content) {
    const found = await readPath(access, path)
    const before = found.kind === "file" ? found.text : undefined
    if (!autorunWrite(name, before, content, prefix)) return
  }
  throw new FileError(autorunRefusal(tool, name, describeHit(hit)))
}

/** What a scoped worker is told when the kernel refused a change: the path, or where a link led, is outside. */
function refusal(access: FileAccess, verb: string, path: string, stderr: string): FileError {
  if (access.scope && /Read-only file system|Permission denied/.test(stderr))
    return new FileError(
      `Could not ${verb} ${path}: it is read-only for this worker. It lies outside the paths the parent allowed ` +
        "(its scope), or it is a link that leads out of them. Leave it unchanged and say in your report what it " +
        "would need.",
    )
  return new FileError(`Could not ${verb} ${path}: ${stderr.trim() || "it failed"}`)
}

/**
 * Writes `content` to `path` (creating parent directories) inside the worker's sandbox. A missing file
 * is created exclusively (noclobber: O_EXCL, so nothing that appears at the name meanwhile is followed).
 */
export async function writePath(access: FileAccess, path: string, content: string): Promise<void> {
  if (!access.writable) throw new FileError("This agent cannot write files.")
  await refuseAutorun(access, path, content, "write")
  const script =
    `f=$1; if [ -d "$f" ]; then exit ${DIRECTORY}; fi; mkdir -p -- "$(dirname -- "$f")" && ` +
    `{ [ -e "$f" ] || [ -L "$f" ] || set -C; cat > "$f"; }`
  const result = await sandboxed(access, { write: true, script, args: [path], stdin: content, creating: path })
  if (result.exitCode === DIRECTORY) throw new FileError(`${path} is a directory.`)
  if (result.exitCode !== 0) throw refusal(access, "write", path, result.stderr)
}

/** Removes a file (never a directory) inside the worker's sandbox. */
export async function removePath(access: FileAccess, path: string): Promise<void> {
  if (!access.writable) throw new FileError("This agent cannot delete files.")
  await refuseAutorun(access, path, undefined, "delete")
  const result = await sandboxed(access, { write: true, script: `${KIND_CHECK}; rm -f -- "$f"`, args: [path] })
  if (result.exitCode === MISSING) throw new FileError(`${path} does not exist.`)
  if (result.exitCode === DIRECTORY) throw new FileError(`${path} is a directory.`)
  if (result.exitCode !== 0) throw refusal(access, "delete", path, result.stderr)
}

/** ripgrep inside the read-only sandbox; exit 1 (no match) is an empty answer, not an error. */
export async function ripgrep(access: FileAccess, args: string[]): Promise<string> {
  // rg blocks on a FIFO named as its path (in a walk it skips them): refuse anything but a file or directory.
  const special = `if [ ! -d "$p" ] && [ ! -f "$p" ] && [ -e "$p" ]; then exit ${SPECIAL}; fi`
  const script = `p="\${@: -1}"; ${special}; exec rg "$@"`
  const result = await sandboxed(access, { write: false, script, args })
  if (result.exitCode === SPECIAL)
    throw new FileError(
      `${args.at(-1)} is not a regular file or a directory (a device, socket or pipe); it is not searched.`,
    )
  if (result.exitCode === 127)
    throw new FileError("ripgrep (rg) is not installed under /usr; install it (apt-get install ripgrep).")
  if (result.exitCode !== 0 && result.exitCode !== 1)
    throw new FileError(result.stderr.trim() || `rg failed (exit ${result.exitCode})`)
  return result.stdout
}
