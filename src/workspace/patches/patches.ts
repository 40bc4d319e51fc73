// The patch store: one record (`<id>.json`) and one patch (`<id>.patch`, the bytes of a binary-safe
// `git diff`) per isolated worker under the state dir. The record is written when the worktree is
// created (it is the registry entry that admits the worktree as a workspace, see
// src/sandbox/host-paths.ts) and completed when the worker's patch is collected. Nothing here is
// deleted except by patch_discard, which leaves a tombstone (`<id>.discarded`, no path in it admits
// anything) so that a second discard, or a late patch_show, is answered "already discarded".
// A patch's state as the parent sees it (patch-state.ts): open, waiting, applied; then discarded.
import { chmod, readdir, rename } from "node:fs/promises"
import { z } from "zod"
import { CHANGE_KINDS } from "../snapshot"
import { fail } from "../../errors"
import { PATCH_ID } from "../../sandbox"
import { writeJson } from "../../util/fs"
import { count, date, owned } from "../../util/schema"
import { readState, type SetAside } from "../../util/state-file"
import type { DiskUse } from "../disk"
import type { WorktreeLayout } from "../git"

export { PATCH_STATES, patchState, type PatchState } from "./patch-state"

function checkPatchId(id: string): void {
  if (!PATCH_ID.test(id))
    throw fail(
      "Usage",
      `"${id.slice(0, 80)}" is not a patch id.`,
      'Pass the patch_id a worker with isolation "worktree" returned, or call task_list.',
    )
}

export const patchRecordFile = (dir: string, id: string) => `${dir}/${id}.json`
export const patchFile = (dir: string, id: string) => `${dir}/${id}.patch`
export const discardedFile = (dir: string, id: string) => `${dir}/${id}.discarded`

export function savePatchRecord(dir: string, record: PatchRecord): Promise<void> {
  return writeJson(patchRecordFile(dir, record.id), record, 0o600)
}

/** Moves a patch git wrote elsewhere into the store (copied chunk by chunk, then renamed into place). */
export async function storePatchFile(dir: string, id: string, from: string): Promise<void> {
  const temp = `${patchFile(dir, id)}.tmp`
  await Bun.write(temp, Bun.file(from))
  await chmod(temp, 0o600)
  await rename(temp, patchFile(dir, id))
}

const absolute = z.string().startsWith("/")

const PatchFileSchema = z.object({
  path: z.string(),
  /** The path before a rename. */
  oldPath: z.string().optional(),
  change: z.enum(CHANGE_KINDS),
  /** Lines added and removed; 0 for a binary file. */
  additions: z.number(),
  deletions: z.number(),
  binary: z.boolean(),
  /** Git modes (100644, 100755, 120000 for a symlink); absent on the side where the file does not exist. */
  oldMode: z.string().optional(),
  newMode: z.string().optional(),
  /** Blob ids in the private repository (SHA-1), what the target must hold before and after. */
  oldOid: z.string().optional(),
  newOid: z.string().optional(),
  /** A symlink's target after the change (its blob's bytes, UTF-8), for review and the link rule. */
  linkTarget: z.string().optional(),
})
export type PatchFile = z.infer<typeof PatchFileSchema>

/** A patch's record, declared once: what task_list, doctor, patch_show/apply/discard and lane reuse read. */
const PatchRecordSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(PATCH_ID),
  /** open: the worker runs in the worktree; ready: a patch was collected (again after each turn). */
  status: z.enum(["open", "ready"]),
  createdAt: date,
  collectedAt: date.optional(),
  taskId: z.string().optional(),
  layout: owned<WorktreeLayout>(z.looseObject({ dir: absolute, tree: absolute, gitDir: absolute })),
  /** The user's side: the workspace the snapshot was taken of, its repository, HEAD at that moment. */
  source: z.object({ workspace: absolute, root: absolute, gitDir: absolute, head: z.string().optional() }),
  /** The snapshot's tree id in the private repository. */
  base: z.string(),
  /** The collected work's tree id. */
  after: z.string().optional(),
  /** sha256 over the base id and the patch bytes: patch_apply's token that the caller saw this patch. */
  digest: z.string().optional(),
  files: z.array(PatchFileSchema).optional(),
  summary: z.string().optional(),
  bytes: count.optional(),
  /** What the worktree (snapshot, private repository, the worker's files) took on disk when last collected. */
  disk: owned<DiskUse>(z.looseObject({ bytes: count })).optional(),
  warnings: z.array(z.string()).optional(),
  /** A scoped worker's changed paths outside its scope: left out of the patch, still in the worktree. */
  outOfScope: z.array(z.string()).optional(),
  /** Why the worker's work was not stored as a patch (larger than maxPatchBytes); the worktree stays. */
  refused: z.string().optional(),
  /** When patch_apply wrote the patch whose digest is appliedDigest (a later turn's patch is waiting again). */
  appliedAt: date.optional(),
  appliedDigest: z.string().optional(),
})
export type PatchRecord = z.infer<typeof PatchRecordSchema>

/** What is left of a discarded patch: when, and where it was for. */
const DiscardedSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(PATCH_ID),
  discardedAt: date,
  workspace: absolute,
  appliedAt: date.optional(),
})
export type DiscardedPatch = z.infer<typeof DiscardedSchema>

const FIX =
  "Its worker's patch can no longer be applied from this record: inspect the moved file, delete it once you " +
  "no longer need it, and run the worker again if you still want its edits."

/** Reads one record; one that fails its schema (or answers for another id) is set aside. */
async function readPatch(dir: string, id: string): Promise<{ value?: PatchRecord; setAside?: SetAside }> {
  const named = (record: { id: string }) =>
    record.id === id ? undefined : `its id ${JSON.stringify(record.id)} is not its file name's ${id}`
  // Read loose: keys a newer version wrote are kept as they are.
  return readState(patchRecordFile(dir, id), PatchRecordSchema.loose(), FIX, named)
}

export async function readPatchRecord(dir: string, id: string): Promise<PatchRecord | undefined> {
  checkPatchId(id)
  return (await readPatch(dir, id)).value
}

/** A discarded patch's tombstone, or undefined (none, or one that failed its schema: set aside, then unknown). */
export async function readDiscarded(dir: string, id: string): Promise<DiscardedPatch | undefined> {
  checkPatchId(id)
  const named = (entry: { id: string }) =>
    entry.id === id ? undefined : `its id ${JSON.stringify(entry.id)} is not its file name's ${id}`
  const fix = "It only said when the patch was discarded: delete it."
  return (await readState(discardedFile(dir, id), DiscardedSchema.loose(), fix, named)).value
}

export function saveDiscarded(dir: string, record: PatchRecord, discardedAt: string): Promise<void> {
  const entry: DiscardedPatch = {
    version: 1,
    id: record.id,
    discardedAt,
    workspace: record.source.workspace,
    appliedAt: record.appliedAt,
  }
  return writeJson(discardedFile(dir, record.id), entry, 0o600)
}

/**
 * Marks the patch applied, re-read first: one discarded meanwhile is not brought back, and one a later
 * turn collected again (another digest) stays waiting. False when nothing was marked.
 */
export async function markApplied(dir: string, id: string, digest: string, appliedAt: string): Promise<boolean> {
  const current = (await readPatch(dir, id)).value
  if (!current || current.digest !== digest) return false
  await savePatchRecord(dir, { ...current, appliedAt, appliedDigest: digest })
  return true
}

/**
 * The record and where its bytes are (read them in pieces), or a Usage error saying how to find a patch that exists.
 */
export async function loadPatch(dir: string, id: string): Promise<{ record: PatchRecord; file: string; size: number }> {
  checkPatchId(id)
  const { value: record, setAside } = await readPatch(dir, id)
  if (setAside)
    throw fail(
      "Usage",
      `The record of patch ${id} could not be read (${setAside.reason}); it was moved to ${setAside.movedTo}.`,
      setAside.fix,
    )
  if (!record) {
    const gone = await readDiscarded(dir, id)
    if (gone)
      throw fail(
        "Usage",
        `Patch ${id} was discarded at ` +
          `${gone.discardedAt}${gone.appliedAt ? ` (applied at ${gone.appliedAt})` : ""}: its diff and worktree ` +
          `are gone.`,
        "Nothing to do for it; run the worker again if you want its edits back.",
      )
    throw fail(
      "Usage",
      `No patch ${id}.`,
      "It never existed here, or its record was lost; task_result of the worker shows its patch_id, task_list the " +
        "stored patches.",
    )
  }
  if (record.refused)
    throw fail(
      "Usage",
      `Patch ${id} was not stored: ${record.refused}`,
      `The worker's files stay in its worktree ${record.layout.tree}; patch_discard removes them.`,
    )
  if (record.status !== "ready" || !record.digest)
    throw fail(
      "Usage",
      `Patch ${id} is not collected yet: its worker is still running.`,
      "Wait for the worker with task_status, then retry.",
    )
  const file = Bun.file(patchFile(dir, id))
  if (!(await file.exists()))
    throw fail(
      "Server",
      `The patch file of ${id} is missing from ${dir}.`,
      "Discard it with patch_discard and run the worker again.",
    )
  return { record, file: patchFile(dir, id), size: file.size }
}

/** Every stored patch record, newest first (task_list and doctor show the waiting ones), and those set aside now. */
export async function listPatches(dir: string): Promise<{ records: PatchRecord[]; setAside: SetAside[] }> {
  const names = await readdir(dir).catch(() => [] as string[]) // no patches dir yet: no patches
  const ids = names
    .filter((name) => name.endsWith(".json") && PATCH_ID.test(name.slice(0, -5)))
    .map((name) => name.slice(0, -5))
  const reads = await Promise.all(ids.map((id) => readPatch(dir, id)))
  const records = reads
    .flatMap((read) => (read.value ? [read.value] : []))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
  return { records, setAside: reads.flatMap((read) => (read.setAside ? [read.setAside] : [])) }
}
