// Small file helpers: atomic writes (temp file + rename, so a reader never sees half a file) and
// JSON reads that tell "absent" from "unreadable".
import { mkdir, rename, stat, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { fail, type ErrorKind } from "../errors"

export async function writeAtomic(file: string, content: string | Uint8Array, mode?: number): Promise<void> {
  await mkdir(dirname(file), { recursive: true })
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`
  await writeFile(temp, content, mode === undefined ? undefined : { mode })
  await rename(temp, file)
}

export const writeJson = (file: string, value: unknown, mode?: number) => writeAtomic(file, `${JSON.stringify(value, null, 2)}\n`, mode)

/** The parsed file, or undefined when it does not exist or is not valid JSON. */
export async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await Bun.file(file).text()) as T
  } catch {
    return undefined
  }
}

/** The parsed file, or undefined when it does not exist; a file that is not JSON is a named error with `hint`. */
export async function readJsonFile(file: string, kind: ErrorKind, hint: string): Promise<unknown> {
  const info = await stat(file).catch(() => undefined)
  if (!info) return undefined
  // A directory (or a FIFO) in the file's place is a mistake to report, never "no file, use defaults".
  if (!info.isFile()) throw fail(kind, `${file} is not a regular file.`, `Remove it (it is a ${info.isDirectory() ? "directory" : "special file"}), then ${hint.charAt(0).toLowerCase()}${hint.slice(1)}`)
  const handle = Bun.file(file)
  try {
    return JSON.parse(await handle.text())
  } catch (error) {
    throw fail(kind, `${file} is not valid JSON: ${(error as Error).message}`, hint)
  }
}
