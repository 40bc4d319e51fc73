// Small file helpers: atomic writes (temp file + rename, so a reader never sees half a file) and
// JSON reads that tell "absent" from "unreadable".
import { constants } from "node:fs"
import { access, chmod, lstat, mkdir, open, readdir, rename, rm, stat, statfs, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { fail, type ErrorKind } from "../errors"
import { jsonErrorPlace } from "./json-position"

/** Why a write failed, said so a person can fix it: a full or read-only disk is not an internal error. */
const WRITE_FAILURES: Record<string, string> = {
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EROFS: "the filesystem is read-only",
  EACCES: "permission is denied",
  EPERM: "the operation is not permitted",
}

export const writeAtomic = (file: string, content: string | Uint8Array, mode?: number) =>
  writeThrough(file, content, { mode, durable: false })

/**
 * writeAtomic that also survives a crash of the machine: the content is fsynced before the rename and
 * the directory after it, so the name holds the whole file or the one before, never an empty one.
 * For files recovery acts on (claims), where a lost or empty file would be taken for a free one.
 */
export const writeDurable = (file: string, content: string | Uint8Array, mode?: number) =>
  writeThrough(file, content, { mode, durable: true })

/** Fsyncs a directory, so that a rename or link in it is on disk. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r")
  await handle.sync().finally(() => handle.close())
}

async function writeThrough(
  file: string,
  content: string | Uint8Array,
  options: { mode?: number; durable: boolean },
): Promise<void> {
  const { mode, durable } = options
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`
  try {
    await mkdir(dirname(file), { recursive: true })
    if (durable) {
      const handle = await open(temp, "w", mode ?? 0o666)
      try {
        await handle.writeFile(content)
        await handle.sync()
      } finally {
        await handle.close()
      }
    } else await writeFile(temp, content, mode === undefined ? undefined : { mode })
    await rename(temp, file)
    if (durable) await syncDirectory(dirname(file))
  } catch (error) {
    // Never leave a half-written temp file behind (a full disk is exactly when one would be).
    await rm(temp, { force: true }).catch(() => undefined) // the write's own error is the one to report
    const code = (error as NodeJS.ErrnoException).code ?? ""
    const why = WRITE_FAILURES[code]
    if (!why) throw error
    throw fail(
      "Server",
      `Cannot write ${file}: ${why} (${code}).`,
      `Free space or fix the permissions of ${dirname(file)} (it moves with XDG_STATE_HOME / XDG_CONFIG_HOME), ` +
        `then retry; nothing was half-written.`,
      { file, code },
    )
  }
}

export const writeJson = (file: string, value: unknown, mode?: number) =>
  writeAtomic(file, `${JSON.stringify(value, null, 2)}\n`, mode)

/** The parsed file, or undefined when it does not exist or is not valid JSON. */
export async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await Bun.file(file).text()) as T
  } catch {
    // Absent or not JSON: undefined, as documented above.
    return undefined
  }
}

/**
 * What stat says, or undefined when nothing is there (or a path component is not a directory). Any
 * other failure (permission, I/O) is thrown: "cannot look" is never taken for "absent".
 */
export async function statIfPresent(path: string, follow = true) {
  try {
    return follow ? await stat(path) : await lstat(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOENT" || code === "ENOTDIR") return undefined
    throw error
  }
}

/** The parsed file, or undefined when it does not exist; a file that is not JSON is a named error with `hint`. */
export async function readJsonFile(file: string, kind: ErrorKind, hint: string): Promise<unknown> {
  const info = await statIfPresent(file)
  if (!info) return undefined
  // A directory (or a FIFO) in the file's place is a mistake to report, never "no file, use defaults".
  if (!info.isFile())
    throw fail(
      kind,
      `${file} is not a regular file.`,
      `Remove it (it is a ${info.isDirectory() ? "directory" : "special file"}), then ` +
        `${hint.charAt(0).toLowerCase()}${hint.slice(1)}`,
    )
  const text = await Bun.file(file).text()
  try {
    return JSON.parse(text)
  } catch (error) {
    throw fail(kind, `${file} is not valid JSON${jsonErrorPlace(text)}: ${(error as Error).message}`, hint)
  }
}

/** What a task needs free in the state dir: its record, lock and logs start small but grow. */
const MIN_STATE_FREE_BYTES = 1024 * 1024

/**
 * Refuses to start work when the state dir's filesystem is (nearly) full or read-only: a task that
 * cannot record itself would leave a stuck record or lock behind. Checked before anything is written.
 */
export async function checkStateSpace(dir: string): Promise<void> {
  let probe = dir
  // The nearest existing ancestor is what a first write would create the dir on.
  while (!(await statIfPresent(probe)) && probe !== "/") probe = dirname(probe)
  const writable = await access(probe, constants.W_OK).then(
    () => undefined,
    (error: NodeJS.ErrnoException) => error.code,
  )
  if (writable)
    throw fail(
      "Server",
      `The state dir ${dir} cannot be written: ${WRITE_FAILURES[writable] ?? writable} (${writable}).`,
      `Make it writable (or point XDG_STATE_HOME elsewhere), then retry; nothing was started.`,
      { dir, code: writable },
    )
  // A filesystem that cannot report its free space (some FUSE mounts) is not refused for it.
  const info = await statfs(probe).catch(() => undefined)
  if (info && info.bavail * info.bsize < MIN_STATE_FREE_BYTES)
    throw fail(
      "Server",
      `The state dir ${dir} has ${info.bavail * info.bsize} bytes free; a task needs at least ` +
        `${MIN_STATE_FREE_BYTES} to record itself.`,
      `Free space on that filesystem (or point XDG_STATE_HOME elsewhere), then retry; nothing was started.`,
      { dir },
    )
}

/**
 * Takes group and other permissions off `dir` and everything below it (links are left alone: chmod
 * would follow them). A missing `dir` is nothing to do; an entry that vanishes meanwhile is skipped.
 */
export async function makePrivate(dir: string): Promise<void> {
  const top = await lstat(dir).catch(() => undefined) // missing: nothing to make private
  if (!top?.isDirectory()) return
  const pending = [dir]
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    const info = await lstat(current).catch(() => undefined) // vanished meanwhile: skipped
    if (!info || info.isSymbolicLink()) continue
    // Removed or no longer ours between lstat and chmod: the server's umask covers what it writes next.
    if (info.mode & 0o077) await chmod(current, info.mode & 0o7700).catch(() => undefined)
    if (!info.isDirectory()) continue
    // vanished: nothing below
    for (const name of await readdir(current).catch(() => [] as string[])) pending.push(`${current}/${name}`)
  }
}
