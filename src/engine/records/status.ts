// A task's status and which statuses are final: zod-free, so the MCP layer names them at start (the
// tools' enums, a result's wording) without building the record's schema (record-schema.ts).
export const STATUSES = [
  "running",
  "succeeded",
  "failed",
  "timed_out",
  "cancelled",
  "needs_review",
  "interrupted",
] as const

export type Status = (typeof STATUSES)[number]

const FINISHED: readonly Status[] = ["succeeded", "failed", "timed_out", "cancelled", "needs_review", "interrupted"]

export const isFinished = (status: Status) => FINISHED.includes(status)
