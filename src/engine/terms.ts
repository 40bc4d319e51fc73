// The engine's words, limits and pure checks that the MCP tools name when they are declared: their
// schemas' enums and bounds, and the checks and texts a call makes before it reaches a use case.
// Nothing here loads the engine: `serve` answers `initialize` and `tools/list` with this module and
// the tools alone, and loads the engine's surface (index.ts, which re-exports all of this) with the
// first call. test/architecture/startup.test.ts holds the line.

// The one file of the engine that reaches past its packages' doors: it takes each name from the leaf module
// that declares it, so a tool that imports a word loads that module alone, not its package.
export { checkTaskId, roleLabel } from "./records/tasks"
export { isFinished, STATUSES } from "./records/status"
export type { DelegationResult, TaskRecord } from "./records/record-schema"
export { FAILURE_KINDS } from "./records/failure-kinds"
export { fileChange, toStructured } from "./outcome/structured"
export { fromTranscript, renderText } from "./outcome/result"
export { sessionTitle, TITLE_LIMITS } from "./title"
export { AppError, fail } from "../errors"
export { PATCH_STATES, patchState, type PatchState } from "../workspace/patches/patch-state"
export { CHANGE_KINDS } from "../workspace/snapshot/change-kind"
export { shownName } from "../workspace/names"
export { sizeText } from "../workspace/disk"
export { describeSource, MODE_SOURCES, MODES } from "../policy/mode"
export { TIERS } from "../policy/tiers"
export { ROLES } from "../config/bounds"
export { agentName, RUNNER_TOOLS, runnerAgentName } from "../agents/names"
export { RUNNER_TIMEOUT, runnerBrief } from "../runner/brief"
export { DEFAULT_CLIP_BYTES } from "../opencode/output"

/** At most this many briefs in one group. */
export const MAX_BRIEFS = 16

/** Characters of diff per page by default, and at most. */
export const PATCH_PAGE = 16_000
export const MAX_PATCH_PAGE = 64_000

/** How many tasks one listing shows: at least one, at most `max`, `fallback` when not asked. */
export const LIST_LIMIT = { min: 1, max: 200, fallback: 20 } as const

export const SESSION_STATES = ["busy", "idle", "stale"] as const
export type SessionState = (typeof SESSION_STATES)[number]

/** Busy with no event for this long is stale (stuck, or a provider that does not answer). */
export const DEFAULT_STALE_S = 300

/**
 * Rows shown unless asked for more. Each row shown costs OpenCode one message read (~2.5 ms, answered one
 * after another) on top of the list (~30 ms for 1,000 sessions): 10 keep a listing of 1,000 under 100 ms
 * and the parent's text short; the rest are counted in `total` and reached by a filter or a larger `limit`.
 */
export const DEFAULT_SESSION_ROWS = 10
