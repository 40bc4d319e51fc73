// Doctor's look at isolated workers' patches: the ones waiting, open and applied, with what they take.
import { sizeText } from "../workspace/disk"
import { shownName } from "../workspace/names"
import { listPatches, patchState } from "../workspace/patches"
import { pass, type Check } from "./check"

/** How many of a worker's patches doctor names before it says how many more. */
const PATCHES_NAMED = 5

// Isolated workers' patches (and their worktrees) stay until patch_discard: doctor reminds of the ones
// waiting and what they take, which is never a failure.
export const patches: Check = async (ctx) => {
  const { records: all } = await listPatches(ctx.paths.patchesDir)
  const waiting = all.filter((patch) => patchState(patch) === "waiting")
  const applied = all.filter((patch) => patchState(patch) === "applied")
  const open = all.length - waiting.length - applied.length
  if (!all.length) return [pass("patches", "no worker patches waiting")]
  const bytes = waiting.reduce((sum, patch) => sum + (patch.bytes ?? 0), 0)
  const onDisk = (patch: (typeof all)[number]) =>
    patch.disk ? `, its worktree ${sizeText(patch.disk.bytes)} on disk` : ""
  const named = waiting
    .slice(0, PATCHES_NAMED)
    .map(
      (patch) =>
        `${patch.id} for ${shownName(patch.source.workspace)} (${patch.files?.length ?? 0} files, ` +
        `${patch.bytes ?? 0} bytes of diff${onDisk(patch)})`,
    )
  const more = waiting.length > PATCHES_NAMED ? `; ${waiting.length - PATCHES_NAMED} more in task_list` : ""
  const running = open ? `${open} open (their workers run)${waiting.length ? "; " : ""}` : ""
  const disk = waiting.reduce((sum, patch) => sum + (patch.disk?.bytes ?? 0), 0)
  const onDiskTotal = waiting.some((patch) => patch.disk) ? `, ${sizeText(disk)} of worktrees on disk` : ""
  const ready = waiting.length
    ? `${waiting.length} waiting, ${bytes} bytes of diff${onDiskTotal}: ${named.join("; ")}${more}; patch_apply or ` +
      `patch_discard each`
    : ""
  const ids = applied.slice(0, PATCHES_NAMED).map((patch) => patch.id)
  const kept = applied.length
    ? `${running || ready ? "; " : ""}${applied.length} applied, kept until patch_discard: ` +
      `${ids.join(", ")}${applied.length > PATCHES_NAMED ? ` and ${applied.length - PATCHES_NAMED} more` : ""}`
    : ""
  return [pass("patches", `${running}${ready}${kept}`)]
}
