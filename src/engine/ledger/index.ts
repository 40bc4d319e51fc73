// The ledger: one row a task in the index, the per-day cells that `stats` sums, and the reading of a
// row back into the record's accounting. Stands on records.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { addRecord, doneOf, statsOf } from "./ledger-days"
export { LEDGER_TABLES, readCells, rowChanged } from "./ledger-table"
export { type LedgerRecord, parseSince, renderStats, type Stats, type StatsRow, summarize } from "./ledger"
export {
  type FileIdentity,
  type IndexQuery,
  ledgerRow,
  placeOf,
  type RowColumns,
  rowDiffers,
  rowOf,
  selection,
  stampHolds,
  UPSERT_ROW,
} from "./index-rows"
