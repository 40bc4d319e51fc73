// Retention for what a task record does not hold: group files, state files set aside as `.corrupt`,
// patch tombstones, runner logs, and patches already applied. A waiting patch (collected, never
// applied) is the user's work and is never removed here; doctor and task_list count it. Every removal
// is idempotent (`rm` with force), so two processes sweeping at once cannot remove anything twice.
import { lstat, readdir, rm } from "node:fs/promises"
import type { Paths } from "../../config/paths"
import type { SandboxLimits } from "../../config/limits"
import { pruneRunsAt } from "../../runner/logs"
import { PATCH_ID } from "../../sandbox"
import { SET_ASIDE } from "../../util/state-file"
import { GROUP_ID } from "../records"
import { sweepFrozen } from "../../workspace/snapshot"
import { listPatches, patchState, type PatchRecord } from "../../workspace/patches"
import { RECORD_MS } from "./retention"

/** Groups, set-aside files and tombstones are kept as long as a finished task's record. */
export const SWEEP_MS = RECORD_MS
/** An applied patch's diff and worktree are kept this long after the apply (patch_show, a second look). */
const APPLIED_PATCH_MS = RECORD_MS

export interface SweepOutcome {
  groups: number
  setAside: number
  tombstones: number
  runs: number
  appliedPatches: number
  /** Frozen verification definitions whose task record is gone, and freezes killed half-way (frozen.ts). */
  frozen: number
}

export interface FileAge {
  name: string
  /** When it got its name: ctime, which a rename (setting a file aside) updates and mtime does not. */
  namedAt: number
}

export type FileKind = "group" | "setAside" | "tombstone"

/** Which kind of sweepable file a name is, in which directory (pure); undefined: never swept. */
export function kindOf(dirRole: "tasks" | "groups" | "patches" | "other", name: string): FileKind | undefined {
  if (SET_ASIDE.test(name)) return "setAside"
  if (dirRole === "groups" && name.endsWith(".json") && GROUP_ID.test(name.slice(0, -5))) return "group"
  if (dirRole === "patches" && name.endsWith(".discarded") && PATCH_ID.test(name.slice(0, -10))) return "tombstone"
  return undefined
}

/** An applied patch past its keep time, its task (if any) long settled (pure). */
export function appliedExpired(record: PatchRecord, now: number): boolean {
  if (patchState(record) !== "applied" || record.appliedAt === undefined) return false
  return now - Date.parse(record.appliedAt) > APPLIED_PATCH_MS
}

/** The date a group or tombstone states (createdAt, discardedAt), when it is one; else undefined. */
async function statedAt(path: string, kind: FileKind, size: number): Promise<number | undefined> {
  if (kind === "setAside" || size > 1024 * 1024) return undefined
  const read = Bun.file(path).json()
  // Garbage in a group or tombstone: no stated date, and its ctime ages it instead.
  const parsed: unknown = await read.catch(() => undefined)
  const field = kind === "group" ? "createdAt" : "discardedAt"
  const value = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)[field] : undefined
  const at = typeof value === "string" ? Date.parse(value) : Number.NaN
  return Number.isFinite(at) ? at : undefined
}

/**
 * Regular files only (a link or a directory with a sweepable name is left alone), aged by the date
 * they state (only this program writes the state dir), else by when they got their name: ctime, as a
 * file set aside keeps its old mtime through the rename.
 */
type Aged = FileAge & { kind: FileKind }

async function agedFiles(dir: string, role: Parameters<typeof kindOf>[0]): Promise<Aged[]> {
  // No such directory yet: nothing in it to sweep.
  const names = await readdir(dir).catch(() => [] as string[])
  const ages = await Promise.all(
    names.map(async (name) => {
      const kind = kindOf(role, name)
      // Gone meanwhile (another pass removed it): nothing to age.
      const info = kind ? await lstat(`${dir}/${name}`).catch(() => undefined) : undefined
      if (!kind || !info?.isFile()) return undefined
      return { name, kind, namedAt: (await statedAt(`${dir}/${name}`, kind, info.size)) ?? info.ctimeMs }
    }),
  )
  return ages.filter((age) => age !== undefined)
}

export interface SweepOptions {
  now?: number
  perPass?: number
  limits: Pick<SandboxLimits, "runRetentionHours" | "runRetentionCount">
  /** Removes an applied patch the way patch_discard does (holding its worktree); absent: applied patches stay. */
  discardApplied?: (record: PatchRecord) => Promise<boolean>
}

export async function sweep(paths: Paths, options: SweepOptions): Promise<SweepOutcome> {
  const now = options.now ?? Date.now()
  let budget = options.perPass ?? 500
  const outcome: SweepOutcome = { groups: 0, setAside: 0, tombstones: 0, runs: 0, appliedPatches: 0, frozen: 0 }
  const counters: Record<FileKind, keyof SweepOutcome> = {
    group: "groups",
    setAside: "setAside",
    tombstone: "tombstones",
  }
  const dirs = [
    ["tasks", paths.tasksDir],
    ["groups", paths.groupsDir],
    ["patches", paths.patchesDir],
    ["other", paths.ownersDir],
  ] as const
  for (const [role, dir] of dirs) {
    for (const file of await agedFiles(dir, role)) {
      if (now - file.namedAt <= SWEEP_MS || budget <= 0) continue
      await rm(`${dir}/${file.name}`, { force: true })
      outcome[counters[file.kind]]++
      budget--
    }
  }
  const runRetention = { hours: options.limits.runRetentionHours, count: options.limits.runRetentionCount }
  if (budget > 0) outcome.runs = (await pruneRunsAt(paths.runsDir, runRetention, now, budget)).length
  budget -= outcome.runs
  // A task's frozen definition lives as long as its record (a continue is graded against it).
  const recorded = (taskID: string) => Bun.file(`${paths.tasksDir}/${taskID}.json`).exists()
  if (budget > 0) outcome.frozen = await sweepFrozen(paths.frozenDir, recorded)
  budget -= outcome.frozen
  if (options.discardApplied && budget > 0) {
    const { records } = await listPatches(paths.patchesDir)
    const expired = records.filter((record) => appliedExpired(record, now)).slice(0, budget)
    for (const record of expired) if (await options.discardApplied(record)) outcome.appliedPatches++
  }
  return outcome
}
