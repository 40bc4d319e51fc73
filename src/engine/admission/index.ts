// Whether a call may start or continue, and on what terms: budgets, routes, the policy gate and its
// markers' memory, a worktree's place. Decides before anything runs; stands on capacity.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { checkBriefSize, knownClient, planBudget, syncBudgetMs } from "./budgets"
export { admitContinue, continuedTurn, type ContinuePolicy } from "./continue-check"
export { checkOwnWorktree, sessionPlace } from "./isolation"
export {
  type CallPolicy,
  gatePolicy,
  missingMarkerWarning,
  type PolicyOptions,
  policyReport,
  type PolicyRequest,
} from "./policy"
export type { StartRequest } from "./request"
export { resolveUserRole, rolePrompt } from "./roles"
export { checkOffered, resolveRoute } from "./routes"
