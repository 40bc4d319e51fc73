// Time budgets, decided before anything is locked or started: how long an operation may run, whether
// that fits the parent's tool-call deadline with room to clean up and answer, and how long one tool
// call may wait before it hands back a task id. Pure: data in, numbers or a named error out.
import { PARENT_MARGIN_S, ROLES, type Role, type TimeoutLimits } from "../../config/schema"
import { fail } from "../../errors"

/** Kept free at the end of the parent's budget: abort and remove the session, then write the result. */
const RESERVE = { cleanupMs: 30_000, resultMs: 10_000 } as const
export const RESERVE_MS = RESERVE.cleanupMs + RESERVE.resultMs
/** A runner's command must leave this much of the runner's own deadline for analysis and the report. */
const RUNNER_ANALYSIS_S = 60

export interface BudgetInput {
  /** What is being started, as the error should name it: "worker", "runner", "task_continue (worker)". */
  operation: string
  role: Role
  limits: TimeoutLimits
  /** OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS: replaces the role's deadline for every operation. */
  bridgeTimeoutMs?: number
  /** A test's or caller's explicit deadline for this one operation. */
  overrideMs?: number
  /** A scout's or worker's `timeout_seconds`: this call's deadline, at most the role's own. */
  callTimeoutS?: number
  /** The runner's `timeout_seconds` for its command. */
  commandTimeoutS?: number
}

export interface Budget {
  operation: string
  /** Wall-clock deadline of the OpenCode session, from its start. */
  operationMs: number
  parentMs: number
  reserveMs: number
}

const s = (ms: number) => `${Math.round(ms / 100) / 10}s`

/** Every role must finish at least PARENT_MARGIN_S before the parent gives up. */
export function checkLimits(limits: TimeoutLimits, operation?: string): void {
  for (const role of ROLES) {
    if (limits.parent < limits[role] + PARENT_MARGIN_S)
      throw fail(
        "Config",
        `${operation ? `${operation}: ` : ""}the parent budget (${limits.parent}s) must be at least ` +
          `${PARENT_MARGIN_S}s longer than the ${role} budget (${limits[role]}s).`,
        `Raise timeoutLimits.parent to ${limits[role] + PARENT_MARGIN_S} or more (and the client's tool timeout ` +
          `with it), or lower timeoutLimits.${role}.`,
        { operation: operation ?? role, budgetS: limits[role], parentS: limits.parent, marginS: PARENT_MARGIN_S },
      )
  }
}

/**
 * The operation's budget, or a Config/Usage error naming the operation, the budget and the reserve.
 * Never echoes the task text: errors may be logged or shown where prompts should not be.
 */
export function planBudget(input: BudgetInput): Budget {
  checkLimits(input.limits, input.operation)
  const roleMs = input.bridgeTimeoutMs ?? input.limits[input.role] * 1000
  const roleSource =
    input.bridgeTimeoutMs !== undefined ? "OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS" : `timeoutLimits.${input.role}`
  if (input.callTimeoutS !== undefined && input.callTimeoutS * 1000 > roleMs)
    throw fail(
      "Usage",
      `${input.operation}: timeout_seconds ${input.callTimeoutS} is over the ${input.role} budget of ${s(roleMs)} ` +
        `(${roleSource}).`,
      `Pass timeout_seconds of at most ${Math.floor(roleMs / 1000)}, or raise ${roleSource}.`,
      { operation: input.operation, budgetMs: roleMs, callTimeoutS: input.callTimeoutS },
    )
  const callMs = input.callTimeoutS !== undefined ? input.callTimeoutS * 1000 : undefined
  const operationMs = input.overrideMs ?? callMs ?? roleMs
  const parentMs = input.limits.parent * 1000
  const source = input.overrideMs !== undefined || callMs !== undefined ? "the requested timeout" : roleSource
  if (!Number.isFinite(operationMs) || operationMs < 1000)
    throw fail(
      "Usage",
      `${input.operation}: an operation budget of ${s(operationMs)} is too short.`,
      "Give the operation at least 1s.",
      { operation: input.operation, budgetMs: operationMs },
    )
  if (input.commandTimeoutS !== undefined && input.commandTimeoutS * 1000 + RUNNER_ANALYSIS_S * 1000 > operationMs)
    throw fail(
      "Usage",
      `${input.operation}: a command timeout of ${input.commandTimeoutS}s leaves less than ${RUNNER_ANALYSIS_S}s ` +
        `of the ${s(operationMs)} operation budget for analysis and the report.`,
      `Pass timeout_seconds of at most ${Math.floor(operationMs / 1000) - RUNNER_ANALYSIS_S}, or raise ` +
        `timeoutLimits.runner.`,
      {
        operation: input.operation,
        budgetMs: operationMs,
        commandTimeoutS: input.commandTimeoutS,
        reserveS: RUNNER_ANALYSIS_S,
      },
    )
  if (operationMs + RESERVE_MS > parentMs)
    throw fail(
      "Config",
      `${input.operation}: the operation budget of ${s(operationMs)} (${source}) plus the ${s(RESERVE_MS)} reserve ` +
        `(${s(RESERVE.cleanupMs)} cleanup, ${s(RESERVE.resultMs)} result) does not fit the parent budget of ` +
        `${s(parentMs)}.`,
      `Lower ${source} to at most ${s(parentMs - RESERVE_MS)}, or raise timeoutLimits.parent (and the client's ` +
        `tool timeout) to ${Math.ceil((operationMs + RESERVE_MS) / 1000)}s or more.`,
      { operation: input.operation, budgetMs: operationMs, reserveMs: RESERVE_MS, parentMs },
    )
  return { operation: input.operation, operationMs, parentMs, reserveMs: RESERVE_MS }
}

/** Tool-call deadlines of clients we recognise from `clientInfo.name`, when their registration keeps the default. */
const CLIENT_DEFAULT_TIMEOUT_S: Record<string, number> = { codex: 60 }
/** Room left before a known client deadline: the response must be written and read before it fires. */
const CLIENT_MARGIN_MS = 15_000
const MIN_SYNC_MS = 1000

export interface SyncInput {
  parentS: number
  /** `clientInfo.name` from initialize, when the client sent it. */
  clientName?: string
  /** True when our installer registered this client with the parent timeout (so its default no longer applies). */
  registrationRaised: boolean
  /** OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS. */
  overrideMs?: number
}

/** The client whose default deadline applies, by a case-insensitive match on its name
 * ("codex-mcp-client" → codex). */
export function knownClient(name: string | undefined): string | undefined {
  if (!name) return undefined
  return Object.keys(CLIENT_DEFAULT_TIMEOUT_S).find((known) => name.toLowerCase().includes(known))
}

/**
 * How long one tool call waits for its task before returning `running` with the task id. Ends the
 * reserve before the parent's deadline, and before a recognised client's default deadline unless our
 * installer raised that client's timeout.
 */
export function syncBudgetMs(input: SyncInput): number {
  if (input.overrideMs !== undefined) return input.overrideMs
  let budget = input.parentS * 1000 - RESERVE_MS
  const client = knownClient(input.clientName)
  if (client && !input.registrationRaised)
    budget = Math.min(budget, CLIENT_DEFAULT_TIMEOUT_S[client]! * 1000 - CLIENT_MARGIN_MS)
  return Math.max(MIN_SYNC_MS, budget)
}

/** A brief over the cap is refused before anything starts: a brief points at files, it does not carry them. */
export function checkBriefSize(brief: string, maxBytes: number): void {
  const size = Buffer.byteLength(brief)
  if (size > maxBytes)
    throw fail(
      "Usage",
      `The brief is ${size} bytes; at most ${maxBytes} are accepted.`,
      "Shorten it: point at files by path instead of pasting them (or raise " +
        "OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES, up to 1048576).",
    )
}
