// A patch_apply killed while writing (its journal without `done`) left the user's files half-written
// until a process rolls it back. Doctor names each and the call that does it; it does not roll back
// itself: it holds no workspace's writer state, and an apply running right now looks the same.
import { interruptedApplies } from "../workspace/apply-staging"
import { shownName } from "../workspace/names"
import { listPatches } from "../workspace/patches"
import type { Check } from "./check"

export const applies: Check = async (ctx) => {
  const { records } = await listPatches(ctx.paths.patchesDir)
  const found: string[] = []
  for (const record of records) {
    for (const entry of await interruptedApplies(record.layout.dir))
      found.push(
        `patch ${record.id} into ${shownName(entry.workspace)} (${entry.files} files, journal in ` +
          `${shownName(entry.run)})`,
      )
  }
  if (!found.length) return [{ id: "applies", status: "pass", detail: "no patch_apply was interrupted while writing" }]
  return [
    {
      id: "applies",
      status: "fail",
      detail: `patch_apply was killed while writing, so these workspaces hold part of a patch: ${found.join("; ")}`,
      fix:
        "Call patch_apply (to apply it whole) or patch_discard on each patch named: either first rolls the " +
        "interrupted apply back to the files as they were, temporaries included. Unless a patch_apply of it runs " +
        "right now.",
    },
  ]
}
