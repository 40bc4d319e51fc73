// Reading the state dir's own JSON files (task and patch records, groups, locks, slot and lane claims,
// the server record) so that no single bad file can wedge anything: a file that is not a regular
// file, not JSON, or fails its schema is moved aside to a named `.corrupt` sibling and read as absent
// from then on. The read returns what it set aside, so the caller reports it (once: the file is gone
// from its name); the moved file stays for doctor to name until a person deletes it.
import { constants } from "node:fs"
import { link, open, readdir, rename, rm } from "node:fs/promises"
import type { z } from "zod"
import { statIfPresent } from "./fs"
import { stateJson } from "./sealed"

export interface SetAside {
  /** Where the file was. */
  path: string
  /** Where it is now (`….corrupt`, or `….corrupt-<ms>-<pid>-<n>` when that name is taken). */
  movedTo: string
  reason: string
  fix: string
}

export interface StateRead<T> {
  /** The parsed file; undefined when it is absent or was set aside. */
  value?: T
  /** Present when this read moved the file aside. */
  setAside?: SetAside
}

/** No state file of ours comes near this; a bigger one is not ours to load into memory. */
const MAX_STATE_FILE_BYTES = 32 * 1024 * 1024

/** The suffix of a file moved aside, as doctor finds it. */
export const SET_ASIDE = /\.corrupt(-[\d-]+)?$/

/** Set-asides by this process, so that two in one millisecond get two names. */
let moves = 0

/** The file a read looked at (device and inode): what is moved aside must be that one, not a newer write. */
type Identity = string | undefined

const identityOf = (info: { dev: number; ino: number }) => `${info.dev}:${info.ino}`

/** Moves `path` aside; "replaced" when a writer put a new file there since it was read (read it again). */
async function moveAside(
  path: string,
  seen: Identity,
  reason: string,
  fix: string,
): Promise<SetAside | "replaced" | undefined> {
  const now = await statIfPresent(path, false).catch(() => undefined) // cannot look: the rename below decides
  if (!now) return undefined // someone moved or removed it already: nothing left to report here
  if (seen && identityOf(now) !== seen) return "replaced"
  const free = async (candidate: string) => !(await statIfPresent(candidate, false).catch(() => true))
  // rename(2) replaces what is at its target: a second name must never be one already taken.
  const movedTo = (await free(`${path}.corrupt`))
    ? `${path}.corrupt`
    : `${path}.corrupt-${Date.now()}-${process.pid}-${++moves}`
  // Another process may have moved it already: then there is nothing left to report here.
  const moved = await rename(path, movedTo).then(
    () => true,
    () => false,
  )
  if (!moved) return undefined
  // gone already: nothing to put back
  const taken = seen && (await statIfPresent(movedTo, false).catch(() => undefined))
  if (taken && identityOf(taken) !== seen) {
    // A writer's newer file took the name between the check and the rename: put it back, unless an
    // even newer one has the name by now (then that one stands), and do not report it.
    await link(movedTo, path).catch(() => undefined) // EEXIST: a newer write stands
    await rm(movedTo, { force: true })
    return "replaced"
  }
  process.stderr.write(`opencode-mcp-orchestrator: moved aside ${path} → ${movedTo}: ${reason}. ${fix}\n`)
  return { path, movedTo, reason, fix }
}

type Handle = Awaited<ReturnType<typeof open>>

interface Regular {
  text?: string
  problem?: string
  identity?: Identity
  /** Kept open until the caller is done: while it is, the file's inode number cannot go to a new file. */
  handle?: Handle
}

/**
 * The text of `path`, undefined when absent, or why it can never be read. Opened without following
 * a symlink and without blocking (a FIFO or a link to /dev/zero in its place must not hang a
 * listing), then checked to be a regular file of sane size before a byte is read.
 */
async function readRegular(path: string): Promise<Regular> {
  let handle: Handle
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT") return {}
    // Out of descriptors (or interrupted) says nothing about the file: never a reason to move it aside.
    if (code === "EMFILE" || code === "ENFILE" || code === "EINTR" || code === "EAGAIN") throw error
    if (code === "ELOOP") return { problem: "it is a symbolic link, not a file this program wrote" }
    return { problem: `it cannot be opened (${code ?? (error as Error).message})` }
  }
  try {
    const info = await handle.stat()
    const identity = identityOf(info)
    if (info.isDirectory()) return { problem: "it is a directory, not a file", identity, handle }
    if (!info.isFile())
      return { problem: "it is a special file (a FIFO, socket or device), not a regular file", identity, handle }
    if (info.size > MAX_STATE_FILE_BYTES)
      return {
        problem: `it is ${info.size} bytes, more than any state file (${MAX_STATE_FILE_BYTES})`,
        identity,
        handle,
      }
    return { text: await handle.readFile("utf8"), identity, handle }
  } catch (error) {
    return {
      problem: `it cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      handle,
    }
  }
}

const issues = (error: z.ZodError) =>
  error.issues
    .map((issue) => `${issue.path.join(".") || "(top level)"}: ${issue.message}`)
    .slice(0, 3)
    .join("; ")

/** Reads of one name that found a bad file a writer replaced meanwhile, before it reads as absent. */
const MAX_REREADS = 20

/**
 * The one way a state file is read: parsed by `schema`, or set aside (and returned as such) when it
 * cannot be. `check` adds a rule the schema cannot state (a record's id must match its file name).
 */
export async function readState<T>(
  path: string,
  schema: z.ZodType<T>,
  fix: string,
  check?: (value: T) => string | undefined,
): Promise<StateRead<T>> {
  // A writer may replace a bad file between the read and the move (writes are renames): read again.
  // Only the file that was read is ever moved (by device and inode); a name a writer keeps replacing
  // reads as absent this time rather than risk moving a good record aside.
  for (let attempt = 0; attempt < MAX_REREADS; attempt++) {
    const file = await readRegular(path)
    try {
      if (file.problem === undefined && file.text === undefined) return {}
      const parsed = file.problem ?? parse(file.text ?? "", schema, check)
      if (typeof parsed !== "string") return { value: parsed.value }
      const outcome = await moveAside(path, file.identity, parsed, fix)
      if (outcome !== "replaced") return outcome ? { setAside: outcome } : {}
    } finally {
      await file.handle?.close().catch(() => undefined) // the read's outcome is decided; a failed close changes nothing
    }
  }
  return {}
}

/** The parsed value, or why the text is not one. */
function parse<T>(text: string, schema: z.ZodType<T>, check?: (value: T) => string | undefined): { value: T } | string {
  // A sealed file is verified before a byte of it is believed; a plain one is from before files were sealed.
  const body = stateJson(text)
  if ("problem" in body) return body.problem
  let json: unknown
  try {
    json = JSON.parse(body.json)
  } catch (error) {
    return `it is not valid JSON (${(error as Error).message})`
  }
  const parsed = schema.safeParse(json)
  const problem = parsed.success ? check?.(parsed.data) : issues(parsed.error)
  if (problem || !parsed.success) return `it does not have the expected shape (${problem})`
  return { value: parsed.data }
}

/** readState for a caller that needs only the value (a lock, a claim): what it sets aside is logged. */
export async function readStateFile<T>(
  path: string,
  schema: z.ZodType<T>,
  fix: string,
  check?: (value: T) => string | undefined,
): Promise<T | undefined> {
  return (await readState(path, schema, fix, check)).value
}

/** Files moved aside in `dir` that are still there (doctor names them until someone deletes them). */
export async function setAsideIn(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]) // no such dir: nothing set aside
  return names.filter((name) => SET_ASIDE.test(name)).map((name) => `${dir}/${name}`)
}

/** An ISO date a reader can subtract: `Date.parse` gives a number for it. */
export const isDate = (text: string) => !Number.isNaN(Date.parse(text))
