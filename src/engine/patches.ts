// The patch use cases (show, apply, discard) behind the engine's surface: the MCP tools and any other
// caller translate arguments and results, and every rule (the digest, the writer state, "belongs to a
// running task") is checked here, once.
import { fail } from "../errors"
import { applyPatch, mixedReport, recoverKilled, ruledFiles, interruptedApplies } from "../workspace/apply"
import { shownName } from "../workspace/names"
import {
  fileRange,
  sectionStarts,
  loadPatch,
  markApplied,
  patchState,
  readDiscarded,
  readPatchRecord,
  saveDiscarded,
  type PatchFile,
  type PatchRecord,
  type PatchState,
} from "../workspace/patches"
import { canonicalWorkspace } from "../workspace/root"
import { removeWorktree } from "../workspace/worktree"
import type { Runtime } from "./capacity"
import { isFinished, type TaskRecord } from "./records"
import { PATCH_PAGE } from "./terms"

/** What the patch use cases need of the lifecycle (Delegations provides it). */
export interface PatchDeps {
  runtime: Runtime
  /** Runs `work` holding the workspace's writer state as `holder`; refused while a writer holds it. */
  holding<T>(workspace: string, holder: string, work: () => Promise<T>): Promise<T>
  /** The task as this process knows it. */
  read(id: string): Promise<TaskRecord | undefined>
}

export interface ShowOptions {
  /** Only this file's section (its path, or its path before a rename). */
  file?: string
  offset?: number
  limit?: number
}

export interface PatchPage {
  record: PatchRecord
  state: PatchState
  files: PatchFile[]
  /** The page of the diff, and where it lies in the diff (or the file's section). */
  diff: string
  offset: number
  end: number
  total: number
  next?: number
}

export interface ApplyOptions {
  digest: string
  cwd?: string
  allowAutorun?: boolean
  allowLinks?: boolean
}

export type ApplyOutcome =
  | {
      kind: "applied"
      record: PatchRecord
      workspace: string
      files: PatchFile[]
      appliedAt: string
      /** Files written that the autorun rules name (hidden, root-level non-source, executable, mode change). */
      ruled: { path: string; rule: string }[]
      /** Why the record could not be marked applied, when it could not. */
      unmarked?: string
      /** Set when the files were found holding the patch whole (an interrupted apply completed, say): how. */
      found?: string
    }
  | { kind: "already"; record: PatchRecord }

export type DiscardOutcome =
  | {
      kind: "discarded"
      record: PatchRecord
      was: PatchState
      discardedAt: string
      /** Files a killed apply's rollback left as they are: changed since by someone else. */
      kept: string[]
    }
  | { kind: "already"; id: string; discardedAt: string }

export class Patches {
  constructor(private readonly deps: PatchDeps) {}

  private get dir() {
    return this.deps.runtime.paths.patchesDir
  }

  /** A page of the patch's diff (or of one file's section). */
  async show(id: string, options: ShowOptions = {}): Promise<PatchPage> {
    const { record, file, size } = await loadPatch(this.dir, id)
    const files = record.files ?? []
    // Offsets count bytes, and only the page is read; a page edge inside a UTF-8 character shows as U+FFFD.
    let range = { start: 0, end: size }
    if (options.file) {
      const wanted = options.file
      const index = files.findIndex((entry) => entry.path === wanted || entry.oldPath === wanted)
      const found = index < 0 ? undefined : fileRange(await sectionStarts(file), size, files, index)
      if (found === undefined) {
        const changed = files
          .map((entry) => shownName(entry.path))
          .join(", ")
          .slice(0, 1000)
        throw fail("Usage", `Patch ${record.id} does not change ${shownName(wanted)}.`, `It changes: ${changed}.`)
      }
      range = found
    }
    const total = range.end - range.start
    const offset = Math.min(options.offset ?? 0, total)
    const end = Math.min(total, offset + (options.limit ?? PATCH_PAGE))
    const bytes = await Bun.file(file)
      .slice(range.start + offset, range.start + end)
      .arrayBuffer()
    const diff = Buffer.from(bytes).toString("utf8")
    return { record, state: patchState(record), files, diff, offset, end, total, next: end < total ? end : undefined }
  }

  /** Writes the patch into the workspace as working-tree changes, once its digest is the caller's. */
  async apply(id: string, options: ApplyOptions): Promise<ApplyOutcome> {
    const { runtime } = this.deps
    const dir = this.dir
    const { record, file } = await loadPatch(dir, id)
    if (patchState(record) === "applied" && options.digest === record.digest) return { kind: "already", record }
    const config = await runtime.config()
    const host = runtime.host(config)
    const workspace = await canonicalWorkspace(options.cwd ?? record.source.workspace, host, config)
    // Holding the writer state: an in-place worker or writable runner cannot change the files between the
    // checks and the writes.
    const outcome = await this.deps.holding(workspace, record.id, async (): Promise<ApplyOutcome> => {
      // Read again under the writer state: an apply of this patch that finished meanwhile is answered, not refused.
      const current = await readPatchRecord(dir, record.id)
      if (current && patchState(current) === "applied" && current.digest === options.digest)
        return { kind: "already", record: current }
      const { files, found } = await applyPatch({
        record,
        patchFile: file,
        digest: options.digest,
        workspace,
        host,
        allowAutorun: options.allowAutorun,
        allowLinks: options.allowLinks,
      })
      const appliedAt = new Date().toISOString()
      // The files are written: a record that cannot be marked is said, not a failure of the apply.
      const marked = await markApplied(dir, record.id, record.digest!, appliedAt).catch((error: unknown) =>
        error instanceof Error ? error.message : String(error),
      )
      const unmarked = marked === true ? undefined : marked || "it was discarded or collected again meanwhile"
      const ruled = ruledFiles(record, workspace, files)
      return { kind: "applied", record, workspace, files, appliedAt, ruled, unmarked, found }
    })
    // Nothing runs in an applied patch's worktree any more (task_continue starts a new instance).
    if (outcome.kind === "applied") await runtime.releaseInstances([record.layout.tree])
    return outcome
  }

  /** Removes the patch and its worktree, leaving a tombstone; refused while its task still runs. */
  async discard(id: string): Promise<DiscardOutcome> {
    const { runtime } = this.deps
    const dir = this.dir
    const record = await readPatchRecord(dir, id)
    if (!record) return this.gone(id)
    const task = record.taskId ? await this.deps.read(record.taskId) : undefined
    if (task && !isFinished(task.status))
      throw fail(
        "Usage",
        `Patch ${record.id} belongs to ${task.id}, which is still ${task.status}.`,
        "task_cancel it first, or wait for it with task_status.",
      )
    // Holding the worktree's writer state: a quarantined or preserved session there (one that may
    // still write) keeps the worktree, and its lane, from being emptied and given to another worker.
    // An apply killed while writing is rolled back first, holding the user's workspace: its staging
    // (the files as they were) goes with the lane below.
    let kept: string[] = []
    if ((await interruptedApplies(record.layout.dir)).length) {
      const config = await runtime.config()
      const host = runtime.host(config)
      const workspace = record.source.workspace
      const recovered = await this.deps.holding(workspace, record.id, () =>
        recoverKilled(record, workspace, host, "back"),
      )
      // The lane holds the only copies of the files as they were: it goes only once nothing needs them.
      if (recovered.outcome === "mixed")
        throw fail(
          "Server",
          `Patch ${record.id} was not discarded: an earlier patch_apply stopped while writing could not be ` +
            `rolled back whole: ${mixedReport(recovered.tree)}.`,
          "Fix the cause (free space, permissions), then call patch_discard again to finish the rollback, or " +
            "patch_apply to complete the apply instead; doctor names it until then.",
        )
      kept = recovered.kept
    }
    const discardedAt = await this.deps.holding(record.layout.tree, record.id, async () => {
      // Read again: a discard that finished meanwhile freed the lane, which another worker may hold by now.
      const current = await readPatchRecord(dir, record.id)
      if (!current) return undefined
      const at = new Date().toISOString()
      // The tombstone first: killed before the record goes, the record still answers, and a discard again finishes.
      await saveDiscarded(dir, current, at)
      await removeWorktree(runtime.paths, current)
      return at
    })
    if (!discardedAt) return this.gone(record.id)
    // The lane's directory is the next worker's: its instance goes now, not after the idle time.
    await runtime.releaseInstances([record.layout.tree])
    return { kind: "discarded", record, was: patchState(record), discardedAt, kept }
  }

  /** No record: a discarded patch is answered as such (discard is idempotent); an unknown one is an error. */
  private async gone(id: string): Promise<DiscardOutcome> {
    const tombstone = await readDiscarded(this.dir, id)
    if (!tombstone)
      throw fail(
        "Usage",
        `No patch ${id}.`,
        "It never existed here, or its record was lost; task_list shows the stored patches.",
      )
    return { kind: "already", id, discardedAt: tombstone.discardedAt }
  }
}
