// Pieces every delegating tool shares: the structured result schema, progress notifications, and
// turning errors into results the parent can act on.
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import { z } from "zod"
import { AppError } from "../errors"
import { STATUSES, renderText, type DelegationResult } from "../engine/result"

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

export const modelArgs = {
  model: z.string().min(1).optional().describe("Optional provider/model to use instead of the configured one (see the models tool)."),
  variant: z.string().min(1).optional().describe("Optional model variant (e.g. a reasoning effort) as OpenCode lists it for that model."),
}

export const resultShape = {
  status: z.enum(STATUSES).describe("succeeded, failed, timed_out, cancelled, needs_review, running or interrupted"),
  report: z.string().describe("The agent's final report."),
  model: z.string().optional().describe("The provider/model#variant that actually answered."),
  steps: z.number().describe("Model steps used."),
  tokens: z.object({ input: z.number(), output: z.number(), reasoning: z.number(), cache_read: z.number(), cache_write: z.number() }),
  cost: z.number().describe("Cost as OpenCode reports it (0 when the provider does not price it)."),
  duration_ms: z.number(),
  session_id: z.string().optional(),
  workspace: z.string(),
  tool_calls: z.array(z.object({ tool: z.string(), status: z.string(), target: z.string(), exit_code: z.number().optional() })),
  error: z.string().optional(),
  next: z.string().optional().describe("What to do next when the outcome needs it."),
}

export function toStructured(result: DelegationResult) {
  return {
    status: result.status,
    report: result.report,
    model: result.model,
    steps: result.steps,
    tokens: { input: result.tokens.input, output: result.tokens.output, reasoning: result.tokens.reasoning, cache_read: result.tokens.cacheRead, cache_write: result.tokens.cacheWrite },
    cost: result.cost,
    duration_ms: Math.round(result.durationMs),
    session_id: result.sessionID,
    workspace: result.workspace,
    tool_calls: result.tools.map((call) => ({ tool: call.tool, status: call.status, target: call.target, exit_code: call.exitCode })),
    error: result.error,
    next: result.next,
  }
}

export function delegationResult(result: DelegationResult): CallToolResult {
  return {
    content: [{ type: "text", text: renderText(result) }],
    structuredContent: toStructured(result),
    isError: result.status === "failed",
  }
}

/** An expected failure (bad input, missing prerequisite) as a result the parent can act on. */
export function errorResult(error: unknown): CallToolResult {
  const text = error instanceof AppError ? [error.message, error.hint && `next: ${error.hint}`].filter(Boolean).join("\n") : `internal error: ${error instanceof Error ? error.message : String(error)}`
  return { content: [{ type: "text", text }], isError: true }
}

/** Sends numbered progress notifications when the client asked for them (a progressToken). */
export function progressReporter(extra: Extra): (message: string) => void {
  const token = extra._meta?.progressToken
  if (token === undefined) return () => {}
  let count = 0
  return (message) => {
    count++
    void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: count, message } }).catch(() => undefined)
  }
}
