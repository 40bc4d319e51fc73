// The config's roles, profiles and bounds as plain values, without zod: what the MCP tools' schemas
// and texts show (a server that only lists its tools loads this, not the config schema), and what
// schema.ts checks config.json against.
export const ROLES = ["scout", "worker", "runner"] as const
export type Role = (typeof ROLES)[number]

export const STEP_PROFILES = {
  standard: { scout: 16, worker: 32, runner: 40 },
  extended: { scout: 32, worker: 48, runner: 64 },
} as const

export const TIMEOUT_PROFILES = {
  standard: { scout: 300, worker: 600, runner: 1200, parent: 1500 },
  extended: { scout: 900, worker: 1500, runner: 1800, parent: 2100 },
} as const

/** config maxPatchBytes: 64 MiB by default (a real change is kilobytes; vendored code, megabytes), 1 MiB..1 GiB. */
export const PATCH_BYTES_BOUNDS = { min: 1024 * 1024, max: 1024 * 1024 * 1024, fallback: 64 * 1024 * 1024 } as const

/** The ceiling of config maxParallel: one OpenCode server carries this many sessions at once. */
export const MAX_PARALLEL = 8

/** config instanceIdleSeconds and maxLiveInstances: defaults and ceilings. */
export const INSTANCE_BOUNDS = { idleFallback: 120, idleMax: 86_400, liveFallback: 8, liveMax: 999 } as const

/** config serverRecycleMb (engine/capacity/recycle.ts): 0 never; the default is about 1.25x one directory's server. */
export const RECYCLE_BOUNDS = { fallback: 640, max: 1_048_576 } as const

/** config retentionIntervalSeconds and retentionPerPass (engine/retention/schedule.ts). */
export const RETENTION_INTERVAL_BOUNDS = { min: 1, max: 86_400, fallback: 3600 } as const
export const RETENTION_PER_PASS_BOUNDS = { min: 1, max: 100_000, fallback: 500 } as const

/** config maxWorktreeLanes: its default and ceiling (lane names have at most three digits). */
export const LANE_BOUNDS = { fallback: 64, max: 999 } as const

export const STEP_BOUNDS = { min: 4, max: 256 } as const
export const TIMEOUT_BOUNDS = { min: 30, max: 86_400 } as const
/** The parent's deadline must exceed every role's by this much (cleanup and the result). */
export const PARENT_MARGIN_S = 60
