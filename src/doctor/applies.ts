// A patch_apply stopped while writing (its journal without `done`) may have left the user's files
// part-way until a process brings them to one side. Doctor says, for each, where the files stand —
// read from the files against the patch's before and after images, not from the journal, which may
// be damaged — and the call that finishes the job. It changes nothing itself: it holds no workspace's
// writer state, and an apply running right now looks the same.
import { mixedReport, interruptedApplies, type JournalRead } from "../workspace/apply"
import { badParent, treeState } from "../workspace/write-step"
import { shownName } from "../workspace/names"
import { listPatches } from "../workspace/patches"
import type { Check } from "./check"

const journalSaid = (journal: JournalRead) =>
  journal.kind === "damaged"
    ? `its journal is damaged (${journal.why}), so the patch's record named the files`
    : journal.kind === "old"
      ? "its journal is from an earlier version (no checksum), so the patch's record named the files"
      : "its journal is sound"

export const applies: Check = async (ctx) => {
  const { records } = await listPatches(ctx.paths.patchesDir)
  const found: string[] = []
  const fixes = new Set<string>()
  let unwritten = 0
  for (const record of records) {
    for (const entry of await interruptedApplies(record.layout.dir)) {
      const workspace = entry.journal.kind === "sound" ? entry.journal.journal.workspace : record.source.workspace
      const files = entry.journal.kind === "sound" ? entry.journal.journal.files : (record.files ?? [])
      // Never read through a symlinked directory: such a path is reported as it is, not followed.
      const linked = await Promise.all(files.map((file) => badParent(workspace, file.path, new Set())))
      const tree = linked.some((parent) => parent !== undefined) ? undefined : await treeState(workspace, files)
      // Nothing of it written: the next call only removes its staging.
      if (tree?.outcome === "rolled-back" && tree.changed.length === 0) {
        unwritten++
        continue
      }
      const where =
        `patch ${record.id} into ${shownName(workspace)} (${files.length} files, run ${shownName(entry.run)}; ` +
        `${journalSaid(entry.journal)})`
      if (tree?.outcome === "rolled-forward") {
        found.push(`${where}: every file holds the patch (rolled forward)`)
        fixes.add(`patch_apply records a rolled-forward one as applied, writing nothing`)
      } else {
        found.push(`${where}: mixed, ${tree ? mixedReport(tree) : "a parent directory is a symlink now"}`)
        fixes.add(
          "patch_apply completes a mixed one from where it stopped, or patch_discard rolls it back to the files as " +
            "they were, temporaries included",
        )
      }
    }
  }
  if (!found.length) {
    const left = unwritten
      ? `; ${unwritten} stopped before writing anything (rolled back: the next patch_apply or patch_discard ` +
        "removes its staging)"
      : ""
    return [{ id: "applies", status: "pass", detail: `no patch_apply was interrupted while writing${left}` }]
  }
  return [
    {
      id: "applies",
      status: "fail",
      detail: `patch_apply was stopped while writing: ${found.join("; ")}`,
      fix:
        `Call patch_apply or patch_discard on each patch named: ${[...fixes].join("; ")}. Unless a patch_apply ` +
        "of it runs right now.",
    },
  ]
}
