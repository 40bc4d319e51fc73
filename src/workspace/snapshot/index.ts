// What changed in a workspace, measured rather than taken from the model: the dirty files before and after a
// turn, the files that act on their own (autorun), a verification's definition frozen at the task's start, and
// the change kinds every result, patch and apply names.
// This file is the package's one door: src's other files import the package from here alone
// (test/architecture/floors.test.ts).
export {
  autorunFiles,
  type AutorunFlag,
  autorunFlags,
  type AutorunLink,
  autorunLinks,
  autorunWarning,
  MAX_FLAGS_NAMED,
} from "./autorun"
export { CHANGE_KINDS, type ChangeKind } from "./change-kind"
export { changedFiles, type FileChange, type Snapshot, snapshot } from "./changes"
export { checkFrozenGlobs, type DefinitionSelection } from "./definitions"
export { clockPast, type DiskChanges, diskChangesSince } from "./disk-changes"
export {
  changedDefinition,
  definitionState,
  freezeDefinition,
  type FreezeInput,
  parentsOf,
  readFrozen,
  RESTORE_SCRIPT,
  sweepFrozen,
} from "./frozen"
export { uncommitted, type Uncommitted } from "./uncommitted"
