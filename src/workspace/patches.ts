// The patch store: one record (`<id>.json`) and one patch (`<id>.patch`, the bytes of a binary-safe
// `git diff`) per isolated worker under the state dir. The record is written when the worktree is
// created (it is the registry entry that admits the worktree as a workspace, see
// src/sandbox/host-paths.ts) and completed when the worker's patch is collected. Nothing here is
// deleted except by patch_discard.
import { chmod, readdir, rename } from "node:fs/promises"
import { z } from "zod"
import { fail } from "../errors"
import { PATCH_ID } from "../sandbox"
import { writeJson } from "../util/fs"
import { isDate, readState, type SetAside } from "../util/state-file"
import type { DiskUse } from "./disk"
import type { WorktreeLayout } from "./worktree"

export type PatchChange = "added" | "modified" | "deleted" | "renamed"

export interface PatchFile {
  path: string
  /** The path before a rename. */
  oldPath?: string
  change: PatchChange
  /** Lines added and removed; 0 for a binary file. */
  additions: number
  deletions: number
  binary: boolean
  /** Git modes (100644, 100755, 120000 for a symlink); absent on the side where the file does not exist. */
  oldMode?: string
  newMode?: string
  /** Blob ids in the private repository (SHA-1), what the target must hold before and after. */
  oldOid?: string
  newOid?: string
  /** A symlink's target after the change (its blob's bytes, UTF-8), for review and the link rule. */
  linkTarget?: string
}

export interface PatchRecord {
  version: 1
  id: string
  /** open: the worker runs in the worktree; ready: a patch was collected (again after each turn). */
  status: "open" | "ready"
  createdAt: string
  collectedAt?: string
  taskId?: string
  layout: WorktreeLayout
  /** The user's side: the workspace the snapshot was taken of, its repository, HEAD at that moment. */
  source: { workspace: string; root: string; gitDir: string; head?: string }
  /** The snapshot's tree id in the private repository. */
  base: string
  /** The collected work's tree id. */
  after?: string
  /** sha256 over the base id and the patch bytes: patch_apply's token that the caller saw this patch. */
  digest?: string
  files?: PatchFile[]
  summary?: string
  bytes?: number
  /** What the worktree (snapshot, private repository, the worker's files) took on disk when last collected. */
  disk?: DiskUse
  warnings?: string[]
  /** Why the worker's work was not stored as a patch (larger than maxPatchBytes); the worktree stays. */
  refused?: string
}

export function checkPatchId(id: string): void {
  if (!PATCH_ID.test(id)) throw fail("Usage", `"${id.slice(0, 80)}" is not a patch id.`, 'Pass the patch_id a worker with isolation "worktree" returned, or call task_list.')
}

export const patchRecordFile = (dir: string, id: string) => `${dir}/${id}.json`
export const patchFile = (dir: string, id: string) => `${dir}/${id}.patch`

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
const date = z.string().refine(isDate, "not a date")

/** What task_list, doctor, patch_show/apply/discard and lane reuse read from a record. */
const PatchRecordSchema = z.looseObject({
  version: z.literal(1),
  id: z.string().regex(PATCH_ID),
  status: z.enum(["open", "ready"]),
  createdAt: date,
  collectedAt: date.optional(),
  taskId: z.string().optional(),
  layout: z.looseObject({ dir: absolute, tree: absolute, gitDir: absolute }),
  source: z.looseObject({ workspace: absolute, root: absolute, gitDir: absolute, head: z.string().optional() }),
  base: z.string(),
  after: z.string().optional(),
  digest: z.string().optional(),
  files: z
    .array(
      z.looseObject({
        path: z.string(),
        oldPath: z.string().optional(),
        change: z.enum(["added", "modified", "deleted", "renamed"]),
        additions: z.number(),
        deletions: z.number(),
        binary: z.boolean(),
      }),
    )
    .optional(),
  summary: z.string().optional(),
  bytes: z.number().nonnegative().optional(),
  warnings: z.array(z.string()).optional(),
})

const FIX = "Its worker's patch can no longer be applied from this record: inspect the moved file, delete it once you " + "no longer need it, and run the worker again if you still want its edits."

/** Reads one record; one that fails its schema (or answers for another id) is set aside. */
async function readPatch(dir: string, id: string): Promise<{ value?: PatchRecord; setAside?: SetAside }> {
  const named = (record: { id: string }) => (record.id === id ? undefined : `its id ${JSON.stringify(record.id)} is not its file name's ${id}`)
  return (await readState(patchRecordFile(dir, id), PatchRecordSchema, FIX, named)) as { value?: PatchRecord; setAside?: SetAside }
}

export async function readPatchRecord(dir: string, id: string): Promise<PatchRecord | undefined> {
  checkPatchId(id)
  return (await readPatch(dir, id)).value
}

/** The record and where its bytes are (read them in pieces), or a Usage error saying how to find a patch that exists. */
export async function loadPatch(dir: string, id: string): Promise<{ record: PatchRecord; file: string; size: number }> {
  checkPatchId(id)
  const { value: record, setAside } = await readPatch(dir, id)
  if (setAside) throw fail("Usage", `The record of patch ${id} could not be read (${setAside.reason}); it was moved to ${setAside.movedTo}.`, setAside.fix)
  if (!record) throw fail("Usage", `No patch ${id}.`, "It was discarded, or never existed; task_result of the worker shows its patch_id.")
  if (record.refused) throw fail("Usage", `Patch ${id} was not stored: ${record.refused}`, `The worker's files stay in its worktree ${record.layout.tree}; patch_discard removes them.`)
  if (record.status !== "ready" || !record.digest) throw fail("Usage", `Patch ${id} is not collected yet: its worker is still running.`, "Wait for the worker with task_status, then retry.")
  const file = Bun.file(patchFile(dir, id))
  if (!(await file.exists())) throw fail("Server", `The patch file of ${id} is missing from ${dir}.`, "Discard it with patch_discard and run the worker again.")
  return { record, file: patchFile(dir, id), size: file.size }
}

/** Every stored patch record, newest first (task_list and doctor show the waiting ones), and those set aside now. */
export async function listPatches(dir: string): Promise<{ records: PatchRecord[]; setAside: SetAside[] }> {
  const names = await readdir(dir).catch(() => [] as string[]) // no patches dir yet: no patches
  const ids = names.filter((name) => name.endsWith(".json") && PATCH_ID.test(name.slice(0, -5))).map((name) => name.slice(0, -5))
  const reads = await Promise.all(ids.map((id) => readPatch(dir, id)))
  const records = reads.flatMap((read) => (read.value ? [read.value] : [])).sort((a, b) => b.createdAt.localeCompare(a.createdAt))
  return { records, setAside: reads.flatMap((read) => (read.setAside ? [read.setAside] : [])) }
}
