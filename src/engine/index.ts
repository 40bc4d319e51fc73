// The engine's public surface: everything an adapter (an MCP tool under src/mcp/tools, a CLI command)
// may use, in one place. Adapters translate arguments and results; the use cases behind these names
// live in the engine and the folders it drives. test/architecture/imports.test.ts holds adapters to
// this module, so a new need is a line here, reviewed as part of the surface.

// The core: delegations, their records and results.
export { Delegations } from "./lifecycle"
export { Runtime } from "./capacity"
export { type TaskRecord, isGroupId, readGroup } from "./records"
export { TaskStore } from "./store"

// Groups, patches, listings, the ledger and sessions.
export { groupNext, type Group, type GroupMember } from "./parallel"
export { storedTasks } from "./listing"
export { parseSince, renderStats, summarize, type StatsRow } from "./ledger"
export { renderListing, sessionsOnServer } from "./sessions"
export { sessionOutput } from "./session-output"
export { provideStandIn } from "../sandbox/stand-ins"
export { readDiscarded, readPatchRecord, type PatchRecord } from "../workspace/patches"
export type { SetAside } from "../util/state-file"

// Words and limits the adapters show (names, sizes, policy modes and tiers, roles, the runner's brief),
// each a pure value or check that loads nothing more: terms.ts, which a tool may import on its own.
export * from "./terms"
export { reclaimText } from "../workspace/worktree"
export { roleModels } from "../config/schema"

// What OpenCode holds: its model catalog, its sessions' messages, the shared server's record.
export { readCatalog } from "../opencode/catalog"
export { renderEntries } from "../opencode/output"
export { probeServer, readServerRecord, stopServer } from "../opencode/server"
export { alive } from "../util/process"
export { attachCommand, noServer, noTerminal, parseWatchId, sessionGone, taskSession } from "./watch"
export { waitingOf } from "./turn"
