// Where patch_apply stages: `apply-<hex>/` run directories in the patch's lane directory, so the
// lane's emptying (patch_discard, lane reuse) removes them with it. Read here for recovery and doctor.
import { lstat, readdir } from "node:fs/promises"
import { z } from "zod"
import { unseal } from "../../util/sealed"
import { doneFile, JOURNAL_KIND, journalFile, type Journal } from "../write-step"

const STAGING_NAME = /^apply-[0-9a-f]{8}$/

const fileSchema = z.looseObject({
  path: z.string(),
  oldPath: z.string().optional(),
  oldMode: z.string().optional(),
  newMode: z.string().optional(),
  oldOid: z.string().optional(),
  newOid: z.string().optional(),
})
const journalSchema = z.looseObject({
  workspace: z.string(),
  files: z.array(fileSchema),
  temps: z.array(z.string()).optional(),
})

/** The run directories in a lane directory (absolute). */
export async function stagingDirs(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]) // a lane not made yet stages nothing
  return names.filter((name) => STAGING_NAME.test(name)).map((name) => `${dir}/${name}`)
}

/**
 * What a run directory's journal says: `none` when it has none (killed before its first write: the
 * journal is renamed into place before any), `sound` when its checksum and length hold, `old` for an
 * unsealed journal of the shape an earlier version wrote (no checksum to verify), `damaged` for
 * anything else there (cut short, overwritten, not a regular file). Only a sound journal is trusted
 * as it stands; for the others recovery takes the files from the patch's record and decides from the
 * workspace (apply-tree.ts), never from the journal's text.
 */
export type JournalRead =
  | { kind: "none" }
  | { kind: "sound"; journal: Journal }
  | { kind: "old"; journal: Journal }
  | { kind: "damaged"; why: string }

/** No journal comes near this: one bigger is not ours to read into memory. */
const MAX_JOURNAL_BYTES = 64 * 1024 * 1024

/** Parsed by the journal's schema, or undefined. */
function journalOf(text: string): Journal | undefined {
  try {
    const parsed = journalSchema.safeParse(JSON.parse(text))
    return parsed.success
      ? { workspace: parsed.data.workspace, files: parsed.data.files, temps: parsed.data.temps ?? [] }
      : undefined
  } catch {
    return undefined // not JSON
  }
}

/** A run directory's journal, verified (see JournalRead). */
export async function readJournal(run: string): Promise<JournalRead> {
  // Never opened unless a regular file: a FIFO would block the reader, a symlink lead elsewhere.
  const info = await lstat(journalFile(run)).catch(() => undefined) // absent: killed before its first write
  if (!info) return { kind: "none" }
  if (!info.isFile()) return { kind: "damaged", why: "it is not a regular file" }
  if (info.size > MAX_JOURNAL_BYTES) return { kind: "damaged", why: `it is ${info.size} bytes` }
  const text = await Bun.file(journalFile(run))
    .text()
    .catch(() => undefined) // unreadable: a damaged disk
  if (text === undefined) return { kind: "damaged", why: "it cannot be read" }
  const unsealed = unseal(JOURNAL_KIND, text)
  if (unsealed.kind === "damaged") return unsealed
  const journal = journalOf(unsealed.kind === "sound" ? unsealed.body : unsealed.text)
  if (!journal) return { kind: "damaged", why: "it does not have a journal's shape" }
  return unsealed.kind === "sound" ? { kind: "sound", journal } : { kind: "old", journal }
}

/** A run directory's verdict: its journal, and whether the apply it journals ended (`done`). */
export interface StagedRun {
  run: string
  journal: JournalRead
}

/** Applies of this lane stopped while writing: a journal of any kind (even a damaged one) and no `done`. */
export async function interruptedApplies(dir: string): Promise<StagedRun[]> {
  const found: StagedRun[] = []
  for (const run of await stagingDirs(dir)) {
    const journal = await readJournal(run)
    if (journal.kind !== "none" && !(await Bun.file(doneFile(run)).exists())) found.push({ run, journal })
  }
  return found
}
