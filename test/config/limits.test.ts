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

  const accepted: [string, string, keyof SandboxLimits, number][] = [
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "1000", "shellTimeoutMs", 1000],
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "900000", "shellTimeoutMs", 900_000],
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "", "shellTimeoutMs", 120_000],
    ["OPENCODE_SANDBOX_SHELL_MAX_OUTPUT_BYTES", "4096", "shellMaxOutputBytes", 4096],
    ["OPENCODE_SANDBOX_SHELL_MAX_OUTPUT_BYTES", "1048576", "shellMaxOutputBytes", 1_048_576],
    ["OPENCODE_SANDBOX_RUNNER_LOG_LIMIT_BYTES", "1048576", "runnerLogLimitBytes", 1_048_576],
    ["OPENCODE_SANDBOX_RUNNER_LOG_LIMIT_BYTES", "536870912", "runnerLogLimitBytes", 536_870_912],
    ["OPENCODE_SANDBOX_RUN_RETENTION_HOURS", "1", "runRetentionHours", 1],
    ["OPENCODE_SANDBOX_RUN_RETENTION_HOURS", "168", "runRetentionHours", 168],
    ["OPENCODE_SANDBOX_RUN_RETENTION_COUNT", "1", "runRetentionCount", 1],
    ["OPENCODE_SANDBOX_RUN_RETENTION_COUNT", "200", "runRetentionCount", 200],
    ["OPENCODE_SANDBOX_RUN_RETENTION_COUNT", "007", "runRetentionCount", 7],
    ["OPENCODE_SANDBOX_FILE_MAX_BYTES", "68719476736", "fileMaxBytes", 68_719_476_736],
  ]
  for (const [variable, raw, key, value] of accepted)
    test(`${variable}=${JSON.stringify(raw)} → ${value}`, () => expect(limitsOf({ [variable]: raw })[key]).toBe(value))

  const rejected: [string, string][] = [
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "999"],
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "900001"],
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "1e5"],
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "120000.0"],
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", " 120000"],
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "+120000"],
    ["OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", "0x1000"],
    ["OPENCODE_SANDBOX_SHELL_MAX_OUTPUT_BYTES", "4095"],
    ["OPENCODE_SANDBOX_SHELL_MAX_OUTPUT_BYTES", "-1"],
    ["OPENCODE_SANDBOX_RUNNER_LOG_LIMIT_BYTES", "536870913"],
    ["OPENCODE_SANDBOX_RUNNER_LOG_LIMIT_BYTES", "99999999999999999999"],
    ["OPENCODE_SANDBOX_RUN_RETENTION_HOURS", "0"],
    ["OPENCODE_SANDBOX_RUN_RETENTION_HOURS", "169"],
    ["OPENCODE_SANDBOX_RUN_RETENTION_COUNT", "201"],
    ["OPENCODE_SANDBOX_RUN_RETENTION_COUNT", "twenty"],
  ]
  for (const [variable, raw] of rejected)
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
