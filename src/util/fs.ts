// Small file helpers: atomic writes (temp file + rename, so a reader never sees half a file) and
// JSON reads that tell "absent" from "unreadable".
import { mkdir, rename, writeFile } from "node:fs/promises"
import { dirname } from "node:path"

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
