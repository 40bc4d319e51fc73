// Task records for the store tests: valid against the record schema, distinct ids, finished unless told.
import { newTaskId } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"

let made = 0

export function sampleRecord(fields: Partial<TaskRecord> = {}): TaskRecord {
  // Distinct creation times, so "newest first" has one answer.
  const at = new Date(Date.parse("2026-11-30T12:00:00Z") + made++ * 1000 + Math.floor(Math.random() * 999))
  const status = fields.status ?? "succeeded"
  const finished = status !== "running"
  return {
    version: 1,
    id: newTaskId(),
    role: "scout",
    agent: "opencode-orchestrator-scout",
    workspace: "/work/repo",
    title: "t",
    writable: false,
    status,
    sessions: [],
    ownerPid: 1,
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
    finishedAt: finished ? at.toISOString() : undefined,
    deadline: 0,
    operationMs: 0,
    turns: 1,
    revision: 1,
    progress: [],
    result: finished
      ? {
          status,
          role: "scout",
          report: "done",
          model: "local/m",
          steps: 2,
          tokens: { input: 10, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
          cost: 0.001,
          durationMs: 1000,
          workspace: fields.workspace ?? "/work/repo",
          tools: [],
          commands: [],
        }
      : undefined,
    ...fields,
  } as TaskRecord
}
