// The sensitive markers each directory had, remembered by the product: a marker is workspace content,
// and a delegated agent (or anything else with write access there) can delete it, so its absence is
// never enough to lower a mode. Once a `sensitive` marker is seen in a directory, the directory stays
// sensitive until the parent or the person releases it (the policy tool's `release_missing_markers`);
// a missing marker is reported, not obeyed.
//
// One small file per directory under the state dir, named by a hash of the canonical path and naming
// the directory inside (a record found under another directory's name does not count as that one's).
// Read through its schema (util/state-file.ts); a file that cannot be read is set aside and the
// directory is held at the strictest mode, said so, until released. Written whole by rename (a kill
// mid-write leaves the old record or the new one, never half of one).
import { createHash } from "node:crypto"
import { mkdir, rm } from "node:fs/promises"
import { z } from "zod"
import { writeAtomic } from "../../util/fs"
import { readState, type SetAside } from "../../util/state-file"

const MemorySchema = z
  .object({
    version: z.literal(1),
    directory: z.string().startsWith("/"),
    /** Marker paths seen there (absolute), the ones still present and the ones since gone. */
    markers: z.array(z.string().startsWith("/")).max(16),
    since: z.string(),
    /** Set when an earlier record could not be read: the directory is held sensitive for that alone. */
    unreadable: z.string().max(2000).optional(),
  })
  .strict()
export type ModeMemory = z.infer<typeof MemorySchema>

const FIX =
  "The directory is held in sensitive mode until released: call the policy tool with release_missing_markers: true."

/** The record's file for a directory (canonical or as given), in `dir` (paths.modesDir). */
export const memoryFile = (dir: string, directory: string) =>
  `${dir}/${createHash("sha256").update(directory).digest("hex").slice(0, 32)}.json`

/** What is remembered of one directory: the record, or what reading it set aside. */
export interface Remembered {
  directory: string
  memory?: ModeMemory
  setAside?: SetAside
}

/** The remembered record of `directory`, or what its unreadable file became. */
export async function recall(dir: string, directory: string): Promise<Remembered> {
  const read = await readState(memoryFile(dir, directory), MemorySchema, FIX, (memory) =>
    memory.directory === directory ? undefined : `it names ${memory.directory}, not ${directory}`,
  )
  return {
    directory,
    ...(read.value ? { memory: read.value } : {}),
    ...(read.setAside ? { setAside: read.setAside } : {}),
  }
}

/** Writes `memory` as the record of its directory, whole. */
export async function remember(dir: string, memory: ModeMemory): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  await writeAtomic(memoryFile(dir, memory.directory), `${JSON.stringify(memory)}\n`)
}

/** Drops what is remembered of `directory`: its markers no longer count once they are gone. */
export async function forget(dir: string, directory: string): Promise<void> {
  await rm(memoryFile(dir, directory), { force: true })
}
