// The task record and its parts (status, result, spending, routes, waiting input, policy decision,
// verification), the failure kinds, a task's owners and a parallel group's record: the engine's bottom floor,
// importing nothing of the engine.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { ADVICE, FAILURE_KINDS, type FailureKind } from "./failure-kinds"
export { GROUP_ID, isGroupId, newGroupId, readGroup, saveGroup } from "./groups"
export { TaskOwners } from "./owners"
export { RecordSchema } from "./record-schema"
export {
  type Activity,
  type Bytes,
  checkContinuable,
  type CheckRun,
  checkTaskId,
  type DelegationResult,
  isFinished,
  type MissingMarker,
  newRecord,
  newTaskId,
  nextTurn,
  noteProgress,
  type PolicyDecision,
  requireSession,
  type Reviewed,
  type Status,
  STATUSES,
  TASK_ID,
  type TaskRecord,
  type Verification,
  type WaitingInput,
} from "./tasks"
export {
  addStep,
  answeredSpend,
  type Caps,
  FallbackSchema,
  openSegment,
  overCap,
  seedSegment,
  settleSegment,
  type Spending,
  spendingOf,
  type Tokens,
  totalOf,
} from "./usage"
