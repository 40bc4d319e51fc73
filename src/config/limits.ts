// Sandbox resource limits: the documented table of variables, defaults and ranges (README, "Sandbox
// and runner"). flags.ts reads them; the sandbox and the plugin receive the numbers.
import type { IntegerRange } from "./integer"

export interface SandboxLimits {
  shellTimeoutMs: number
  shellMaxOutputBytes: number
  runnerLogLimitBytes: number
  runRetentionHours: number
  runRetentionCount: number
  tmpMaxBytes: number
  fileMaxBytes: number
  maxProcesses: number
}

export interface LimitSpec extends IntegerRange {
  variable: string
  fallback: number
}

export const LIMIT_SPECS: Record<keyof SandboxLimits, LimitSpec> = {
  shellTimeoutMs: { variable: "OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", fallback: 120_000, min: 1000, max: 900_000 },
  shellMaxOutputBytes: {
    variable: "OPENCODE_SANDBOX_SHELL_MAX_OUTPUT_BYTES",
    fallback: 30_000,
    min: 4096,
    max: 1_048_576,
  },
  runnerLogLimitBytes: {
    variable: "OPENCODE_SANDBOX_RUNNER_LOG_LIMIT_BYTES",
    fallback: 134_217_728,
    min: 1_048_576,
    max: 536_870_912,
  },
  runRetentionHours: { variable: "OPENCODE_SANDBOX_RUN_RETENTION_HOURS", fallback: 24, min: 1, max: 168 },
  runRetentionCount: { variable: "OPENCODE_SANDBOX_RUN_RETENTION_COUNT", fallback: 20, min: 1, max: 200 },
  // The sandbox's /tmp is RAM: without a cap one command can fill the host's memory.
  tmpMaxBytes: {
    variable: "OPENCODE_SANDBOX_TMP_MAX_BYTES",
    fallback: 536_870_912,
    min: 16_777_216,
    max: 8_589_934_592,
  },
  fileMaxBytes: {
    variable: "OPENCODE_SANDBOX_FILE_MAX_BYTES",
    fallback: 1_073_741_824,
    min: 1_048_576,
    max: 68_719_476_736,
  },
  maxProcesses: { variable: "OPENCODE_SANDBOX_MAX_PROCESSES", fallback: 1024, min: 16, max: 65_536 },
}

export type ResourceCaps = Pick<SandboxLimits, "tmpMaxBytes" | "fileMaxBytes" | "maxProcesses">
