// Doctor's look at the state dir's own files: every task and patch record is read through its schema
// (a bad one is set aside now, with its reason), and every file set aside earlier, by any process, is
// named until a person deletes it. A set-aside file is a task or patch no listing shows any more. The
// task index is checked against every record and repaired where it says otherwise (the records are
// the truth); what was repaired is named.
import type { Paths } from "../config/paths"
import { type Drift, TaskStore } from "../engine/store"
import { statIfPresent } from "../util/fs"
import { setAsideIn, type SetAside } from "../util/state-file"
import { listPatches } from "../workspace/patches"
import type { Check, CheckResult } from "./check"

/** The state dirs whose files are read through a schema (util/state-file.ts). */
const stateDirs = (paths: Paths) => [
  paths.tasksDir,
  paths.patchesDir,
  `${paths.patchesDir}/lanes`,
  paths.groupsDir,
  paths.locksDir,
  paths.slotsDir,
  `${paths.slotsDir}/queue`,
  paths.modesDir,
  paths.stateDir,
]

/** How many files doctor names before it says how many more. */
const NAMED = 10

function describeSetAside(fresh: SetAside[], earlier: string[]): CheckResult {
  if (!fresh.length && !earlier.length)
    return { id: "state-files", status: "pass", detail: "every task and patch record reads" }
  const now = fresh.map((file) => `${file.path} (moved to ${file.movedTo}: ${file.reason})`)
  const before = earlier.map((path) => `${path} (set aside earlier)`)
  const all = [...now, ...before]
  const more = all.length > NAMED ? `; ${all.length - NAMED} more` : ""
  return {
    id: "state-files",
    status: "fail",
    detail:
      `${all.length} state file(s) could not be read and were set aside: ` + `${all.slice(0, NAMED).join("; ")}${more}`,
    fix:
      "Each was a task, patch, lock or claim no listing shows any more: inspect the moved file, then delete it. " +
      "Nothing else is blocked by it.",
  }
}

const named = (ids: string[]) =>
  `${ids.slice(0, NAMED).join(", ")}${ids.length > NAMED ? ` and ${ids.length - NAMED} more` : ""}`

/** What the index said otherwise than the records, now repaired; a pass either way (nothing is left to do). */
function describeDrift(drift: Drift): CheckResult {
  const parts = [
    drift.added.length && `${drift.added.length} record(s) had no row, now listed again: ${named(drift.added)}`,
    drift.repaired.length &&
      `${drift.repaired.length} row(s) said otherwise than their record (a status, a date, the numbers stats sums), ` +
        `now set from it: ${named(drift.repaired)}`,
    drift.dropped.length &&
      `${drift.dropped.length} row(s) named a record that is gone, now dropped: ${named(drift.dropped)}`,
  ].filter((part): part is string => typeof part === "string")
  const detail = parts.length
    ? `the task index disagreed with the records and was repaired from them: ${parts.join("; ")}`
    : "the task index agrees with every record"
  return { id: "task-index", status: "pass", detail }
}

export const stateFiles: Check = async (ctx) => {
  const store = new TaskStore(ctx.paths.tasksDir)
  // Before the listing below: its reads repair rows too, and would leave nothing to name. No records
  // directory yet: nothing to check, and doctor creates none.
  const none: Drift = { added: [], repaired: [], dropped: [] }
  const exists = await statIfPresent(ctx.paths.tasksDir).catch(() => undefined)
  const drift = await (exists ? store.views.index.reconcile({ full: true }) : Promise.resolve(none)).catch(
    (error: unknown): CheckResult => ({
      id: "task-index",
      status: "fail",
      detail: `the task index could not be checked against the records: ${(error as Error).message}`,
      fix: "Listings read the records meanwhile. Free space in the state dir, then run doctor again.",
    }),
  )
  await store.list()
  const patches = await listPatches(ctx.paths.patchesDir)
  const fresh = [...store.takeSetAside(), ...patches.setAside]
  const moved = new Set(fresh.map((file) => file.movedTo))
  const earlier = (await Promise.all(stateDirs(ctx.paths).map(setAsideIn))).flat().filter((path) => !moved.has(path))
  store.views.index.close()
  return [describeSetAside(fresh, earlier), "status" in drift ? drift : describeDrift(drift)]
}
