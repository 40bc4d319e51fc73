// The task listing behind the engine's surface: which tasks a query selects (pure), and the whole
// picture task_list shows (tasks, stored patches, worktree lanes, files set aside). The MCP tool and
// the `tasks` command read the same selection, so a filter or a bound is checked in one place.
import { fail } from "../errors"
import type { SetAside } from "../util/state-file"
import { listPatches, patchState, type PatchRecord, type PatchState } from "../workspace/patches"
import { laneState, type LaneState, type Reclaims, type Runtime } from "./capacity"
import type { Status, TaskRecord } from "./records"
import type { IndexQuery } from "./ledger"
import { type Page, TaskStore } from "./store"
import { LIST_LIMIT } from "./terms"

export interface TaskQuery {
  status?: Status
  /** Only tasks (and patches) for this workspace or a directory inside it. */
  cwd?: string
  limit?: number
}

export interface Selection {
  /** The first `limit` tasks the query selects, newest first. */
  tasks: TaskRecord[]
  /** How many the query selects in all. */
  total: number
}

/** A stored patch as a listing shows it. */
export interface PatchEntry {
  id: string
  taskId?: string
  workspace: string
  state: PatchState
  appliedAt?: string
  files: number
  bytes: number
  diskBytes?: number
  createdAt: string
}

export interface Listing extends Selection {
  /** Patches stored for the query's workspace (every one without cwd), applied or not. */
  patches: PatchEntry[]
  lanes: LaneState
  /** State files set aside since the last listing (task records, patch records), each reported once. */
  setAside: SetAside[]
}

/** The limit a query asks for, or a Usage error naming the bounds. Pure. */
export function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return LIST_LIMIT.fallback
  if (Number.isInteger(limit) && limit >= LIST_LIMIT.min && limit <= LIST_LIMIT.max) return limit
  throw fail(
    "Usage",
    `limit ${limit} is invalid: expected a whole number from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}.`,
    `Pass a limit from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}, or none for ${LIST_LIMIT.fallback}.`,
  )
}

/** True when `workspace` is `cwd` or lies inside it (every workspace when no cwd). Pure. */
export function within(cwd: string | undefined): (workspace: string) => boolean {
  if (!cwd) return () => true
  // A trailing slash names the same directory: "/w/repo/" lists what "/w/repo" does.
  const root = cwd.replace(/\/+$/, "")
  return (workspace) => workspace === (root || "/") || workspace.startsWith(`${root}/`)
}

/** The index query a listing asks for: the limit checked, a trailing slash naming the same directory. Pure. */
export function indexQuery(query: TaskQuery): IndexQuery {
  const limit = checkLimit(query.limit)
  // "/w/repo/" lists what "/w/repo" does; "/" holds every workspace.
  const inside = query.cwd?.replace(/\/+$/, "")
  return { status: query.status, limit, ...(inside ? { inside } : {}) }
}

const selection = (page: Page): Selection => ({ tasks: page.records, total: page.total })

/** The tasks recorded in `tasksDir` that `query` selects: for a process that runs no engine (the CLI). */
export async function storedTasks(tasksDir: string, query: TaskQuery): Promise<Selection & { setAside: SetAside[] }> {
  const store = new TaskStore(tasksDir)
  const found = selection(await store.page(indexQuery(query)))
  return { ...found, setAside: store.takeSetAside() }
}

const patchEntry = (patch: PatchRecord): PatchEntry => ({
  id: patch.id,
  taskId: patch.taskId,
  workspace: patch.source.workspace,
  state: patchState(patch),
  appliedAt: patchState(patch) === "applied" ? patch.appliedAt : undefined,
  files: patch.files?.length ?? 0,
  bytes: patch.bytes ?? 0,
  diskBytes: patch.disk?.bytes,
  createdAt: patch.createdAt,
})

/** What the listing needs of the lifecycle (Delegations provides it). */
export interface ListingDeps {
  runtime: Runtime
  /** The tasks an index query selects, newest first, as this process knows them. */
  page(query: IndexQuery): Promise<Page>
  /** Task records set aside since the last call, each once. */
  takeSetAside(): SetAside[]
  /** Lanes this process took back (its isolated starts', and the listing's own audit), reported once. */
  reclaims: Reclaims
}

/** The whole listing: the selected tasks, the stored patches, the lanes (audited), what was set aside. */
export async function listTasks(deps: ListingDeps, query: TaskQuery): Promise<Listing> {
  const found = selection(await deps.page(indexQuery(query)))
  const { paths } = deps.runtime
  const stored = await listPatches(paths.patchesDir)
  const patches = stored.records.filter((patch) => within(query.cwd)(patch.source.workspace)).map(patchEntry)
  const lanes = await laneState(paths, (await deps.runtime.config()).maxWorktreeLanes, deps.reclaims)
  return { ...found, patches, lanes, setAside: [...deps.takeSetAside(), ...stored.setAside] }
}
