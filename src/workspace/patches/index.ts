// An isolated worker's patch: collected from its worktree, stored with its record (one zod schema), its state as
// the parent sees it, its sections for patch_show, and the overlap of two patches.
// This file is the package's one door: src's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { overlaps } from "./overlap"
export { patchOutline, sectionStarts } from "./patch-sections"
export { PATCH_STATES, patchState, type PatchState } from "./patch-state"
export { collectPatch, fileRange } from "./patch"
export {
  listPatches,
  loadPatch,
  markApplied,
  type PatchFile,
  type PatchRecord,
  readDiscarded,
  readPatchRecord,
  saveDiscarded,
  savePatchRecord,
} from "./patches"
