// Reading the state dir's own JSON files (task records, writer locks) so that no single bad file can
// wedge anything: a file that is not JSON, or fails its schema, is moved aside to a named `.corrupt`
// sibling, reported once with its path, reason and fix, and read as absent from then on.
import { rename } from "node:fs/promises"
import { statIfPresent } from "./fs"
import type { z } from "zod"

export interface CorruptFile {
  /** Where the file was. */
  path: string
  /** Where it is now (`…​.corrupt`, or `…​.corrupt-<ms>` when that name is taken). */
  movedTo: string
  reason: string
  fix: string
}

/** Every file moved aside by this process, newest last; shown by task_list and logged once each. */
export const corruptFiles: CorruptFile[] = []

async function moveAside(path: string, reason: string, fix: string): Promise<void> {
  const free = async (candidate: string) => !(await statIfPresent(candidate))
  const movedTo = (await free(`${path}.corrupt`)) ? `${path}.corrupt` : `${path}.corrupt-${Date.now()}`
  // Another process may have moved it already: then there is nothing left to report here.
  if (
    !(await rename(path, movedTo).then(
      () => true,
      () => false,
    ))
  )
    return
  const entry = { path, movedTo, reason, fix }
  corruptFiles.push(entry)
  if (corruptFiles.length > 50) corruptFiles.shift()
  process.stderr.write(`opencode-mcp-orchestrator: moved aside ${path} → ${movedTo}: ${reason}. ${fix}\n`)
}

/**
 * The file parsed by `schema`, or undefined when it is absent or was corrupt (and has now been moved
 * aside). `check` adds a rule the schema cannot state (a record's id must match its file name).
 */
export async function readStateFile<T>(path: string, schema: z.ZodType<T>, fix: string, check?: (value: T) => string | undefined): Promise<T | undefined> {
  let text: string
  try {
    text = await Bun.file(path).text()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    // EISDIR and the like: not a file we can ever read.
    await moveAside(path, `it cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, fix)
    return undefined
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    await moveAside(path, `it is not valid JSON (${(error as Error).message})`, fix)
    return undefined
  }
  const parsed = schema.safeParse(json)
  const problem = parsed.success
    ? check?.(parsed.data)
    : parsed.error.issues
        .map((issue) => `${issue.path.join(".") || "(top level)"}: ${issue.message}`)
        .slice(0, 3)
        .join("; ")
  if (problem || !parsed.success) {
    await moveAside(path, `it does not have the expected shape (${problem})`, fix)
    return undefined
  }
  return parsed.data
}
