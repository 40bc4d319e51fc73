// patch_apply on the host: it stages the patch, runs the write step in its sandbox, refuses links that lead out
// and files that act on their own, and recovers an apply a kill interrupted.
// This file is the package's one door: src's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { interruptedApplies, type JournalRead, stagingDirs } from "./apply-staging"
export { applyPatch, mixedReport, recoverKilled, ruledFiles } from "./apply"
