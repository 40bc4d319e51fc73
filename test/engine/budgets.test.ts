import { describe, expect, test } from "bun:test"
import { TIMEOUT_PROFILES, type TimeoutLimits } from "../../src/config/schema"
import { checkLimits, planBudget, RESERVE_MS, syncBudgetMs, type BudgetInput } from "../../src/engine/admission/budgets"
import { AppError } from "../../src/errors"

const standard: TimeoutLimits = { ...TIMEOUT_PROFILES.standard }
const extended: TimeoutLimits = { ...TIMEOUT_PROFILES.extended }

function errorOf(input: BudgetInput): AppError {
  try {
    planBudget(input)
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
  throw new Error("expected planBudget to refuse")
}

describe("planBudget accepts the profiles as shipped", () => {
  test.each([
    ["scout", standard, 300_000],
    ["worker", standard, 600_000],
    ["runner", standard, 1_200_000],
    ["worker", extended, 1_500_000],
    ["runner", extended, 1_800_000],
  ] as const)("%s on %j", (role, limits, operationMs) => {
    expect(planBudget({ operation: role, role, limits })).toEqual({
      operation: role,
      operationMs,
      parentMs: limits.parent * 1000,
      reserveMs: RESERVE_MS,
    })
  })

  test("the bridge override replaces the role deadline; a test override wins over both", () => {
    expect(
      planBudget({ operation: "worker", role: "worker", limits: standard, bridgeTimeoutMs: 5000 }).operationMs,
    ).toBe(5000)
    expect(
      planBudget({ operation: "worker", role: "worker", limits: standard, bridgeTimeoutMs: 5000, overrideMs: 2000 })
        .operationMs,
    ).toBe(2000)
  })

  test("a call's timeout_seconds within the role's budget becomes the deadline, up to the budget itself", () => {
    expect(planBudget({ operation: "scout", role: "scout", limits: standard, callTimeoutS: 45 }).operationMs).toBe(
      45_000,
    )
    expect(planBudget({ operation: "scout", role: "scout", limits: standard, callTimeoutS: 300 }).operationMs).toBe(
      300_000,
    )
    expect(
      planBudget({ operation: "worker", role: "worker", limits: standard, bridgeTimeoutMs: 120_000, callTimeoutS: 60 })
        .operationMs,
    ).toBe(60_000)
  })

  test("a runner command that leaves exactly 60s fits", () => {
    expect(
      planBudget({ operation: "runner", role: "runner", limits: standard, commandTimeoutS: 1140 }).operationMs,
    ).toBe(1_200_000)
  })
})

/** A call of `role` (its own operation) on the standard profile, with `more` on top. */
const on = (role: BudgetInput["role"], more: Partial<BudgetInput> = {}): BudgetInput => ({
  operation: role,
  role,
  limits: standard,
  ...more,
})

// Every impossible combination: the kind of error, and words its message must contain.
const impossible: [string, BudgetInput, AppError["kind"], string[]][] = [
  [
    "parent not 60s above scout",
    on("scout", { limits: { scout: 300, worker: 300, runner: 300, parent: 359 } }),
    "Config",
    ["parent budget (359s)", "scout budget (300s)", "60s"],
  ],
  [
    "parent not 60s above the longest role, even for another role's call",
    on("scout", { limits: { scout: 60, worker: 60, runner: 1200, parent: 1250 } }),
    "Config",
    ["runner budget (1200s)"],
  ],
  [
    "parent equal to the role",
    on("worker", { limits: { scout: 600, worker: 600, runner: 600, parent: 600 } }),
    "Config",
    ["parent budget (600s)", "budget (600s)"],
  ],
  [
    "bridge override plus reserve beyond the parent",
    on("worker", { bridgeTimeoutMs: 1_470_000 }),
    "Config",
    [
      "worker:",
      "1470s",
      "OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS",
      "40s reserve",
      "30s cleanup",
      "10s result",
      "parent budget of 1500s",
    ],
  ],
  [
    "bridge override of an hour on the standard parent",
    on("runner", { bridgeTimeoutMs: 3_600_000 }),
    "Config",
    ["runner:", "3600s", "parent budget of 1500s"],
  ],
  [
    "test override beyond the parent",
    on("worker", { operation: "task_continue (worker)", overrideMs: 1_461_000 }),
    "Config",
    ["task_continue (worker):", "the requested timeout", "40s reserve"],
  ],
  [
    "scout call timeout over the scout budget",
    on("scout", { callTimeoutS: 301 }),
    "Usage",
    ["scout:", "timeout_seconds 301", "300s", "timeoutLimits.scout"],
  ],
  [
    "worker call timeout over a bridge override",
    on("worker", { bridgeTimeoutMs: 120_000, callTimeoutS: 121 }),
    "Usage",
    ["worker:", "timeout_seconds 121", "120s", "OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS"],
  ],
  ["operation under a second", on("scout", { overrideMs: 500 }), "Usage", ["scout:", "0.5s", "too short"]],
  [
    "runner command leaving 59s",
    on("runner", { commandTimeoutS: 1141 }),
    "Usage",
    ["runner:", "1141s", "less than 60s", "1200s"],
  ],
  ["runner command longer than the runner", on("runner", { commandTimeoutS: 5000 }), "Usage", ["5000s"]],
  [
    "runner command under a bridge override",
    on("runner", { bridgeTimeoutMs: 90_000, commandTimeoutS: 31 }),
    "Usage",
    ["31s", "90s"],
  ],
]

describe("planBudget refuses impossible combinations with the operation, budget and reserve named", () => {
  test.each(impossible)("%s", (_, input, kind, words) => {
    const error = errorOf(input)
    expect(error.kind).toBe(kind)
    for (const word of words) expect(error.message).toContain(word)
    expect(error.hint).toBeTruthy()
    expect(error.data?.operation).toBe(input.operation)
  })

  test("no error carries the brief", () => {
    // planBudget never sees the task text; the input type has no field for it. Pin that by shape.
    const keys: (keyof BudgetInput)[] = [
      "operation",
      "role",
      "limits",
      "bridgeTimeoutMs",
      "overrideMs",
      "callTimeoutS",
      "commandTimeoutS",
    ]
    for (const [, input] of impossible)
      for (const key of Object.keys(input)) expect(keys).toContain(key as keyof BudgetInput)
  })

  test("checkLimits accepts both profiles", () => {
    expect(() => checkLimits(standard)).not.toThrow()
    expect(() => checkLimits(extended)).not.toThrow()
  })
})

describe("syncBudgetMs", () => {
  test.each([
    ["no client name: the parent budget less the reserve", { parentS: 1500, registrationRaised: false }, 1_460_000],
    [
      "Codex with its 60s default",
      { parentS: 1500, clientName: "codex-mcp-client", registrationRaised: false },
      45_000,
    ],
    [
      "Codex registered by our installer with the parent timeout",
      { parentS: 1500, clientName: "codex-mcp-client", registrationRaised: true },
      1_460_000,
    ],
    [
      "Claude Code: long default, parent budget applies",
      { parentS: 2100, clientName: "claude-code", registrationRaised: false },
      2_060_000,
    ],
    [
      "the environment override wins",
      { parentS: 1500, clientName: "codex-mcp-client", registrationRaised: false, overrideMs: 1500 },
      1500,
    ],
  ] as const)("%s", (_, input, expected) => {
    expect(syncBudgetMs(input)).toBe(expected)
  })
})
