// The task store: records on disk, one file a task, and the SQLite index kept in step with them (its
// intents, rebuilds and drift report). Stands on records and the ledger.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export type { Drift } from "./sqlite-index"
export { taskFollowed, TaskStore } from "./task-store"
export type { Page } from "./views"
