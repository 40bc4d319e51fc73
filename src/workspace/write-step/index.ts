// patch_apply's write step, run inside bwrap with only the workspace writable: its targets' checks, the tree it
// leaves, and the journal a killed apply is finished from. Imports only node: builtins, the process wrapper and
// the workspace's name escaper, so it runs with nothing but src/ mounted.
// This file is the package's one door: src's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { doneFile, type Journal, JOURNAL_KIND, journalFile } from "./apply-journal"
export { type StepAnswer, stepMain, type StepRequest } from "./apply-step"
export { badParent } from "./apply-targets"
export { treeState, type TreeState } from "./apply-tree"
