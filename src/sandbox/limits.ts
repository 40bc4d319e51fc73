// Sandbox resource limits from the environment (the documented table). Pure: the caller hands in the env
// record it read once, so the plugin can re-read its environment per invocation and tests pass a literal.
import { fail } from "../errors"

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

interface LimitSpec {
  variable: string
  fallback: number
  min: number
  max: number
}

export const LIMIT_SPECS: Record<keyof SandboxLimits, LimitSpec> = {
  shellTimeoutMs: { variable: "OPENCODE_SANDBOX_SHELL_TIMEOUT_MS", fallback: 120_000, min: 1000, max: 900_000 },
  shellMaxOutputBytes: { variable: "OPENCODE_SANDBOX_SHELL_MAX_OUTPUT_BYTES", fallback: 30_000, min: 4096, max: 1_048_576 },
  runnerLogLimitBytes: {
    variable: "OPENCODE_SANDBOX_RUNNER_LOG_LIMIT_BYTES",
    fallback: 134_217_728,
    min: 1_048_576,
    max: 536_870_912,
  },
  runRetentionHours: { variable: "OPENCODE_SANDBOX_RUN_RETENTION_HOURS", fallback: 24, min: 1, max: 168 },
  runRetentionCount: { variable: "OPENCODE_SANDBOX_RUN_RETENTION_COUNT", fallback: 20, min: 1, max: 200 },
  // The sandbox's /tmp is RAM: without a cap one command can fill the host's memory.
  tmpMaxBytes: { variable: "OPENCODE_SANDBOX_TMP_MAX_BYTES", fallback: 536_870_912, min: 16_777_216, max: 8_589_934_592 },
  fileMaxBytes: { variable: "OPENCODE_SANDBOX_FILE_MAX_BYTES", fallback: 1_073_741_824, min: 1_048_576, max: 68_719_476_736 },
  maxProcesses: { variable: "OPENCODE_SANDBOX_MAX_PROCESSES", fallback: 1024, min: 16, max: 65_536 },
}

export type ResourceCaps = Pick<SandboxLimits, "tmpMaxBytes" | "fileMaxBytes" | "maxProcesses">

/**
 * Strict: digits only (no sign, no exponent, no whitespace, no `0x`), within the bounds. Unset keeps the
 * default; an empty string is treated as a mistake rather than "unset", because `VAR= cmd` is usually
 * one. Anything else fails closed: a typo must not silently lift a cap.
 */
function parseLimit(spec: LimitSpec, raw: string | undefined): number {
  if (raw === undefined) return spec.fallback
  const expected = `an integer from ${spec.min} to ${spec.max} (default ${spec.fallback})`
  const value = /^[0-9]{1,16}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value < spec.min || value > spec.max)
    throw fail(
      "Sandbox",
      `${spec.variable}=${JSON.stringify(raw)} is invalid: expected ${expected}.`,
      `Set ${spec.variable} to ${expected}, or unset it.`,
      { variable: spec.variable, value: raw, min: spec.min, max: spec.max },
    )
  return value
}

export function parseSandboxLimits(env: Record<string, string | undefined>): SandboxLimits {
  const out = {} as SandboxLimits
  for (const key of Object.keys(LIMIT_SPECS) as (keyof SandboxLimits)[]) {
    const spec = LIMIT_SPECS[key]
    out[key] = parseLimit(spec, env[spec.variable])
  }
  return out
}
