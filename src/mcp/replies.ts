// What the MCP layer answers with, zod-free: a delegation's result as text and structured content, a task
// still running, an expected failure, and progress notifications. Loaded at start (define.ts, tasks.ts);
// the schemas these answers follow are in shared.ts, which loads with the tools.
import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server"
import type { z } from "zod"
import { type DelegationResult, fromTranscript, renderText, type TaskRecord, toStructured } from "../engine/terms"
import { AppError } from "../errors"
import type { resultShape } from "./shared"

/** The request context the SDK gives a handler: its signal, progress token and channel back. */
export type Extra = ServerContext

/** What a tool answers: the text the model reads and the structured content its output schema declares. */
export interface Reply<Structured> {
  text: string
  structured: Structured
  /** The work it reports failed (a delegation that ended `failed`): the client marks the result an error. */
  failed?: boolean
}

/** What scout, worker, runner and the task tools answer: a delegation's result in resultShape. */
export type ResultReply = Reply<z.output<z.ZodObject<typeof resultShape>>>

export function delegationResult(result: DelegationResult): ResultReply {
  return { text: renderText(result), structured: toStructured(result), failed: result.status === "failed" }
}

/** A task that is still running: its id, what it did lately, and how to continue. */
export function runningResult(record: TaskRecord, waitedMs: number): ResultReply {
  const result: DelegationResult = {
    ...fromTranscript({
      role: record.role,
      workspace: record.workspace,
      taskID: record.id,
      sessionID: record.sessionID,
      durationMs: Date.now() - Date.parse(record.createdAt),
      status: "running",
    }),
    report: record.progress.length ? `Still running. Latest: ${record.progress.at(-1)}` : "Still running.",
    next:
      `The task continues in the background. Call task_status with task_id "${record.id}" and wait_seconds (up ` +
      `to 50) to follow it, task_result when it is done, or task_cancel to stop it. Waited ` +
      `${Math.round(waitedMs / 1000)}s here so the call returns before the client's deadline.`,
  }
  return { text: renderText(result), structured: { ...toStructured(result), progress: record.progress.slice(-10) } }
}

/** An expected failure (bad input, missing prerequisite) as a result the parent can act on. */
export function errorResult(error: unknown): CallToolResult {
  const text =
    error instanceof AppError
      ? [error.message, error.hint && `next: ${error.hint}`].filter(Boolean).join("\n")
      : `internal error: ${error instanceof Error ? error.message : String(error)}`
  return { content: [{ type: "text", text }], isError: true }
}

/** Sends numbered progress notifications when the client asked for them (a progressToken). */
export function progressReporter(extra: Extra): (message: string) => void {
  const token = extra.mcpReq._meta?.progressToken
  if (token === undefined) return () => {}
  let count = 0
  return (message) => {
    count++
    const params = { progressToken: token, progress: count, message }
    // Progress to a client that already left has no one to tell; the task goes on.
    // A progress note the client cannot take (closed, no token) must not fail the task it reports on.
    void extra.mcpReq.notify({ method: "notifications/progress", params }).catch(() => undefined)
  }
}
