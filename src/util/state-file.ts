// Reading the state dir's own JSON files (task and patch records, groups, locks, slot and lane claims,
// the server record) so that no single bad file can wedge anything: a file that is not a regular
// file, not JSON, or fails its schema is moved aside to a named `.corrupt` sibling and read as absent
// from then on. The read returns what it set aside, so the caller reports it (once: the file is gone
// from its name); the moved file stays for doctor to name until a person deletes it.
import { constants } from "node:fs"
import { open, readdir, rename } from "node:fs/promises"
import type { z } from "zod"
import { statIfPresent } from "./fs"

export interface SetAside {
  /** Where the file was. */
  path: string
  /** Where it is now (`….corrupt`, or `….corrupt-<ms>` when that name is taken). */
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
export const MAX_STATE_FILE_BYTES = 32 * 1024 * 1024

/** The suffix of a file moved aside, as doctor finds it. */
export const SET_ASIDE = /\.corrupt(-\d+)?$/

async function moveAside(path: string, reason: string, fix: string): Promise<SetAside | undefined> {
  const free = async (candidate: string) => !(await statIfPresent(candidate, false).catch(() => true))
  const movedTo = (await free(`${path}.corrupt`)) ? `${path}.corrupt` : `${path}.corrupt-${Date.now()}`
  // Another process may have moved it already: then there is nothing left to report here.
  const moved = await rename(path, movedTo).then(
    () => true,
    () => false,
  )
  if (!moved) return undefined
  process.stderr.write(`opencode-mcp-orchestrator: moved aside ${path} → ${movedTo}: ${reason}. ${fix}\n`)
  return { path, movedTo, reason, fix }
}

/**
 * The text of `path`, undefined when absent, or why it can never be read. Opened without following
 * a symlink and without blocking (a FIFO or a link to /dev/zero in its place must not hang a
 * listing), then checked to be a regular file of sane size before a byte is read.
 */
async function readRegular(path: string): Promise<{ text?: string; problem?: string }> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT") return {}
    if (code === "ELOOP") return { problem: "it is a symbolic link, not a file this program wrote" }
    return { problem: `it cannot be opened (${code ?? (error as Error).message})` }
  }
  try {
    const info = await handle.stat()
    if (info.isDirectory()) return { problem: "it is a directory, not a file" }
    if (!info.isFile()) return { problem: "it is a special file (a FIFO, socket or device), not a regular file" }
    if (info.size > MAX_STATE_FILE_BYTES) return { problem: `it is ${info.size} bytes, more than any state file (${MAX_STATE_FILE_BYTES})` }
    return { text: await handle.readFile("utf8") }
  } catch (error) {
    return { problem: `it cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` }
  } finally {
    await handle.close().catch(() => undefined) // the read's outcome is decided; a failed close changes nothing
  }
}

const issues = (error: z.ZodError) =>
  error.issues
    .map((issue) => `${issue.path.join(".") || "(top level)"}: ${issue.message}`)
    .slice(0, 3)
    .join("; ")

/**
 * The one way a state file is read: parsed by `schema`, or set aside (and returned as such) when it
 * cannot be. `check` adds a rule the schema cannot state (a record's id must match its file name).
 */
export async function readState<T>(path: string, schema: z.ZodType<T>, fix: string, check?: (value: T) => string | undefined): Promise<StateRead<T>> {
  const { text, problem: unreadable } = await readRegular(path)
  if (unreadable) return { setAside: await moveAside(path, unreadable, fix) }
  if (text === undefined) return {}
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return { setAside: await moveAside(path, `it is not valid JSON (${(error as Error).message})`, fix) }
  }
  const parsed = schema.safeParse(json)
  const problem = parsed.success ? check?.(parsed.data) : issues(parsed.error)
  if (problem || !parsed.success) return { setAside: await moveAside(path, `it does not have the expected shape (${problem})`, fix) }
  return { value: parsed.data }
}

/** readState for a caller that needs only the value (a lock, a claim): what it sets aside is logged. */
export async function readStateFile<T>(path: string, schema: z.ZodType<T>, fix: string, check?: (value: T) => string | undefined): Promise<T | undefined> {
  return (await readState(path, schema, fix, check)).value
}

/** Files moved aside in `dir` that are still there (doctor names them until someone deletes them). */
export async function setAsideIn(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]) // no such dir: nothing set aside
  return names.filter((name) => SET_ASIDE.test(name)).map((name) => `${dir}/${name}`)
}

/** An ISO date a reader can subtract: `Date.parse` gives a number for it. */
export const isDate = (text: string) => !Number.isNaN(Date.parse(text))
