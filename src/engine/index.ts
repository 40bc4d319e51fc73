// The engine's public surface: everything an adapter (an MCP tool under src/mcp/tools, a CLI command)
// may use, in one place. Adapters translate arguments and results; the use cases behind these names
// live in the engine and the folders it drives. test/architecture/imports.test.ts holds adapters to
// this module, so a new need is a line here, reviewed as part of the surface.

// The core: delegations, their records and results.
export { Delegations } from "./lifecycle"
export { Runtime } from "./runtime"
export { checkTaskId, isFinished, type TaskRecord } from "./tasks"
export { TaskStore } from "./task-store"
export { STATUSES } from "./result"
export { fileChange } from "./structured"
export { sessionTitle } from "./title"
export { AppError, fail } from "../errors"

// Groups, patches, listings, the ledger and sessions.
export { MAX_BRIEFS, type Group, type GroupMember } from "./parallel"
export { MAX_PATCH_PAGE } from "./patches"
export { LIST_LIMIT, storedTasks } from "./listing"
export { parseSince, renderStats, summarize, type StatsRow } from "./ledger"
export {
  listSessions,
  renderSessions,
  DEFAULT_SESSION_ROWS,
  DEFAULT_STALE_S,
  SESSION_STATES,
  type SessionState,
} from "./sessions"
export { PATCH_STATES, patchState, readDiscarded, readPatchRecord, type PatchRecord } from "../workspace/patches"
export type { PatchState } from "../workspace/patches"
export type { SetAside } from "../util/state-file"

// Words and limits the adapters show: names, sizes, policy modes and tiers, roles, the runner's brief.
export { shownName } from "../workspace/names"
export { sizeText } from "../workspace/disk"
export { reclaimText } from "../workspace/lane-audit"
export { describeSource, MODE_SOURCES, MODES } from "../policy/mode"
export { TIERS } from "../policy/tiers"
export { ROLES, roleModels } from "../config/schema"
export { agentName, RUNNER_TOOLS, runnerAgentName } from "../agents/names"
export { RUNNER_TIMEOUT, runnerBrief } from "../runner/brief"

// What OpenCode holds: its model catalog, its sessions' messages, the shared server's record.
export { readCatalog } from "../opencode/catalog"
export { DEFAULT_CLIP_BYTES, type Entry, entriesOf, lastAnswer, page, renderEntries } from "../opencode/output"
export { readMessages, sessionDirectory } from "../opencode/session"
export { probeServer, readServerRecord, stopServer } from "../opencode/server"
export { alive } from "../util/process"
export { attachCommand, noServer, noTerminal, parseWatchId, sessionGone, taskSession } from "./watch"
export { waitingOf } from "./inbox"
