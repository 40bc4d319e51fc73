// An isolated worker's worktree: created from a snapshot in a lane, the lanes reused and reclaimed, and removed
// with its patch.
// This file is the package's one door: src's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { type LaneBounds, type LaneReclaim, patchIds, patchRef, reclaimText } from "./lane-audit"
export { auditLanes, claimedLanes, laneHolder } from "./lanes"
export { createWorktree, removeWorktree } from "./worktree"
