// A task's run from launch to its end, waiting on it, and the recovery of runs a killed process left.
// Stands on outcome and turn.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { acquireWriter, launchTurn } from "./launching"
export { recoverAll } from "./recovery"
export { Runs } from "./runs"
export { follow, type FollowOptions, wait } from "./waiting"
