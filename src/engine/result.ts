// The result a parent receives: a short report plus fields it can check.
import type { Role } from "../config/schema"
import { formatModel, type ToolCall, type Transcript } from "../opencode/session"

export const STATUSES = ["running", "succeeded", "failed", "timed_out", "cancelled", "needs_review", "interrupted"] as const
export type Status = (typeof STATUSES)[number]

export interface DelegationResult {
  status: Status
  role: Role
  report: string
  sessionID?: string
  /** provider/model#variant that actually answered, from OpenCode's messages. */
  model?: string
  steps: number
  tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number }
  cost: number
  durationMs: number
  workspace: string
  tools: ToolCall[]
  error?: string
  /** What the parent should do next, when the outcome needs it. */
  next?: string
}

export function fromTranscript(base: { role: Role; workspace: string; sessionID?: string; durationMs: number; status: Status }, transcript?: Transcript): DelegationResult {
  return {
    ...base,
    report: transcript?.text ?? "",
    model: transcript?.route ? formatModel(transcript.route) : undefined,
    steps: transcript?.steps ?? 0,
    tokens: transcript?.tokens ?? { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: transcript?.cost ?? 0,
    tools: transcript?.tools ?? [],
    error: transcript?.error,
  }
}

/** The text block: the report first, then one line of facts. Structured content carries the rest. */
export function renderText(result: DelegationResult): string {
  const facts = [
    `status: ${result.status}`,
    result.model && `model: ${result.model}`,
    `steps: ${result.steps}`,
    `tokens: ${result.tokens.input} in / ${result.tokens.output} out`,
    `duration: ${(result.durationMs / 1000).toFixed(1)}s`,
    result.sessionID && `session: ${result.sessionID}`,
  ].filter(Boolean)
  const lines = [result.report || "(no report)", "", facts.join(" · ")]
  if (result.error) lines.push(`error: ${result.error}`)
  if (result.next) lines.push(`next: ${result.next}`)
  return lines.join("\n")
}
