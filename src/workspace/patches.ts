// The patch store: one record (`<id>.json`) and one patch (`<id>.patch`, the bytes of a binary-safe
// `git diff`) per isolated worker under the state dir. The record is written when the worktree is
// created (it is the registry entry that admits the worktree as a workspace, see
// src/sandbox/host-paths.ts) and completed when the worker's patch is collected. Nothing here is
// deleted except by patch_discard.
import { readdir } from "node:fs/promises"
import { fail } from "../errors"
import { PATCH_ID } from "../sandbox"
import { readJson, writeAtomic, writeJson } from "../util/fs"
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
}

export function checkPatchId(id: string): void {
  if (!PATCH_ID.test(id)) throw fail("Usage", `"${id.slice(0, 80)}" is not a patch id.`, 'Pass the patch_id a worker with isolation "worktree" returned, or call task_list.')
}

export const patchRecordFile = (dir: string, id: string) => `${dir}/${id}.json`
export const patchFile = (dir: string, id: string) => `${dir}/${id}.patch`

export function savePatchRecord(dir: string, record: PatchRecord): Promise<void> {
  return writeJson(patchRecordFile(dir, record.id), record, 0o600)
}

export function savePatchBytes(dir: string, id: string, bytes: Uint8Array): Promise<void> {
  return writeAtomic(patchFile(dir, id), bytes, 0o600)
}

export async function readPatchRecord(dir: string, id: string): Promise<PatchRecord | undefined> {
  checkPatchId(id)
  return readJson<PatchRecord>(patchRecordFile(dir, id))
}

/** The record and its bytes, or a Usage error saying how to find a patch that exists. */
export async function loadPatch(dir: string, id: string): Promise<{ record: PatchRecord; bytes: Uint8Array }> {
  const record = await readPatchRecord(dir, id)
  if (!record) throw fail("Usage", `No patch ${id}.`, "It was discarded, or never existed; task_result of the worker shows its patch_id.")
  if (record.status !== "ready" || !record.digest) throw fail("Usage", `Patch ${id} is not collected yet: its worker is still running.`, "Wait for the worker with task_status, then retry.")
  const file = Bun.file(patchFile(dir, id))
  if (!(await file.exists())) throw fail("Server", `The patch file of ${id} is missing from ${dir}.`, "Discard it with patch_discard and run the worker again.")
  return { record, bytes: await file.bytes() }
}

/** Every stored patch record, newest first (task_list and doctor show the waiting ones). */
export async function listPatches(dir: string): Promise<PatchRecord[]> {
  const names = await readdir(dir).catch(() => [] as string[]) // no patches dir yet: no patches
  const records = await Promise.all(names.filter((name) => name.endsWith(".json") && PATCH_ID.test(name.slice(0, -5))).map((name) => readJson<PatchRecord>(`${dir}/${name}`)))
  return records.filter((record): record is PatchRecord => record !== undefined).sort((a, b) => b.createdAt.localeCompare(a.createdAt))
}
