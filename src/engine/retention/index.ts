// How long what a task left is kept: the schedule, the sweep and a patch's expiry. Stands on the store
// and capacity.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { expireApplied } from "./expire-patch"
export { RetentionSchedule } from "./schedule"
