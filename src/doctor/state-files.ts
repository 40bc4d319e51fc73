// Doctor's look at the state dir's own files: every task and patch record is read through its schema
// (a bad one is set aside now, with its reason), and every file set aside earlier, by any process, is
// named until a person deletes it. A set-aside file is a task or patch no listing shows any more.
import type { Paths } from "../config/paths"
import { TaskStore } from "../engine/task-store"
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

export const stateFiles: Check = async (ctx) => {
  const store = new TaskStore(ctx.paths.tasksDir)
  await store.list()
  const patches = await listPatches(ctx.paths.patchesDir)
  const fresh = [...store.takeSetAside(), ...patches.setAside]
  const moved = new Set(fresh.map((file) => file.movedTo))
  const earlier = (await Promise.all(stateDirs(ctx.paths).map(setAsideIn))).flat().filter((path) => !moved.has(path))
  return [describeSetAside(fresh, earlier)]
}
