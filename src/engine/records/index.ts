// The task record and its parts (status, result, spending, routes, waiting input, policy decision,
// verification), declared once in record-schema.ts, its pure edits, the failure kinds, a task's owners and
// a parallel group's record: the engine's bottom floor, importing nothing of the engine.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { ADVICE, FAILURE_KINDS, type FailureKind } from "./failure-kinds"
export { GROUP_ID, isGroupId, newGroupId, readGroup, saveGroup } from "./groups"
export { TaskOwners } from "./owners"
export {
  type Activity,
  type Bytes,
  type CheckRun,
  type DelegationResult,
  type MissingMarker,
  type PolicyDecision,
  RecordSchema,
  type Reviewed,
  type TaskRecord,
  type Verification,
  type WaitingInput,
  WaitingInputSchema,
} from "./record-schema"
export { isFinished, type Status, STATUSES } from "./status"
export {
  checkContinuable,
  checkTaskId,
  newRecord,
  newTaskId,
  nextTurn,
  noteProgress,
  requireSession,
  TASK_ID,
  roleLabel,
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
