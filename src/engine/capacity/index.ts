// What the machine can hold: worker slots, writer locks, shared OpenCode instances and their recycling,
// lanes, and the readiness checks a start makes. Stands on the store.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { laneBounds, laneState, type LaneState, Reclaims } from "./lanes"
export { lockedError, orphaned, WriterLocks } from "./locks"
export {
  bwrapReadiness,
  configModelReadiness,
  LAUNCHER_NAMES,
  launcherReadiness,
  opencodeConfigReadiness,
  type Readiness,
  refuseHostUnready,
  refuseUnready,
  stateDirReadiness,
} from "./readiness"
export { Runtime } from "./runtime"
export { type Slot, Slots } from "./slots"
