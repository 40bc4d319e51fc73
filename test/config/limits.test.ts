import { describe, expect, test } from "bun:test"
import { readFlags } from "../../src/config/flags"
import type { SandboxLimits } from "../../src/config/limits"
import { AppError } from "../../src/errors"

const limitsOf = (env: Record<string, string>) => readFlags({ HOME: "/h", ...env }).sandbox.limits

describe("sandbox limits from the environment", () => {
  test("unset variables keep the documented defaults", () => {
    expect(limitsOf({})).toEqual({
      shellTimeoutMs: 120_000,
      shellMaxOutputBytes: 30_000,
      runnerLogLimitBytes: 134_217_728,
      runRetentionHours: 24,
      runRetentionCount: 20,
      tmpMaxBytes: 536_870_912,
      fileMaxBytes: 1_073_741_824,
      maxProcesses: 1024,
    })
  })

  // Per variable: the limit it sets, and values as written with what they become.
  const accepted: [string, keyof SandboxLimits, Record<string, number>][] = [
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "shellTimeoutMs", { "1000": 1000, "900000": 900_000, "": 120_000 }],
    ["OPENCODE_SANDBOX_SHELL_MAX_OUTPUT_BYTES", "shellMaxOutputBytes", { "4096": 4096, "1048576": 1_048_576 }],
    [
      "OPENCODE_SANDBOX_RUNNER_LOG_LIMIT_BYTES",
      "runnerLogLimitBytes",
      { "1048576": 1_048_576, "536870912": 536_870_912 },
    ],
    ["OPENCODE_SANDBOX_RUN_RETENTION_HOURS", "runRetentionHours", { "1": 1, "168": 168 }],
    ["OPENCODE_SANDBOX_RUN_RETENTION_COUNT", "runRetentionCount", { "1": 1, "200": 200, "007": 7 }],
    ["OPENCODE_SANDBOX_FILE_MAX_BYTES", "fileMaxBytes", { "68719476736": 68_719_476_736 }],
  ]
  for (const [variable, key, values] of accepted)
    for (const [raw, value] of Object.entries(values))
      test(`${variable}=${JSON.stringify(raw)} → ${value}`, () =>
        expect(limitsOf({ [variable]: raw })[key]).toBe(value))

  // Per variable: values it refuses.
  const rejected: [string, string[]][] = [
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", ["999", "900001", "1e5", "120000.0", " 120000", "+120000", "0x1000"]],
    ["OPENCODE_SANDBOX_SHELL_MAX_OUTPUT_BYTES", ["4095", "-1"]],
    ["OPENCODE_SANDBOX_RUNNER_LOG_LIMIT_BYTES", ["536870913", "99999999999999999999"]],
    ["OPENCODE_SANDBOX_RUN_RETENTION_HOURS", ["0", "169"]],
    ["OPENCODE_SANDBOX_RUN_RETENTION_COUNT", ["201", "twenty"]],
  ]
  for (const [variable, raws] of rejected)
    for (const raw of raws)
      test(`${variable}=${JSON.stringify(raw)} fails closed, naming the variable, the range and the default`, () => {
        let error: unknown
        try {
          limitsOf({ [variable]: raw })
        } catch (caught) {
          error = caught
        }
        expect(error).toBeInstanceOf(AppError)
        expect((error as AppError).kind).toBe("Usage")
        expect((error as AppError).message).toContain(variable)
        expect((error as AppError).message).toMatch(/an integer from \d+ to \d+ \(default \d+\)/)
        expect((error as AppError).hint).toContain(variable)
      })
})
