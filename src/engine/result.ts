// The result a parent receives: a short report plus fields it can check.
import type { Role } from "../config/schema"
import { formatModel } from "../opencode/session"
import type { ToolCall, Transcript } from "../opencode/transcript"
import type { AutorunFlag } from "../workspace/autorun"
import type { FileChange } from "../workspace/changes"
import type { FailureKind } from "./failure-kinds"
import { sizeText } from "../workspace/disk"
import { shownName } from "../workspace/names"
import type { PatchFile, PatchState } from "../workspace/patches"
import { toStructured } from "./structured"
import type { Reviewed } from "./tasks"
import type { Verification } from "./verify"
import { watchCommand } from "./watch-command"

/** An isolated worker's edits, as the parent reviews and applies them (patch_show, patch_apply). */
export interface PatchSummary {
  id: string
  digest: string
  files: PatchFile[]
  /** At most 2 KB; patch_show has the diff. */
  summary: string
  bytes: number
  /** What its worktree takes on disk until patch_apply or patch_discard (a lower bound when the walk stopped early). */
  diskBytes?: number
  /** waiting when collected; task_result reads it again from the patch store (applied, discarded). */
  state?: PatchState | "discarded"
}

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

export interface Command {
  command: string
  exitCode?: number
}

export interface DelegationResult {
  status: Status
  role: Role
  report: string
  taskID?: string
  sessionID?: string
  /** provider/model#variant that actually answered, from OpenCode's messages. */
  model?: string
  /** The routes of config.json's list the task left before `model`, each with why (routing.ts). */
  fallbackFrom?: { model: string; why: string }[]
  steps: number
  tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number }
  cost: number
  durationMs: number
  workspace: string
  tools: ToolCall[]
  /** From git (before/after snapshots), not from the model; undefined outside a git repository. */
  files?: FileChange[]
  /** A scoped worker's changed files outside its scope (scope.ts); in a worktree, left out of the patch. */
  outOfScope?: string[]
  /** worker with isolation "worktree": the patch its edits were collected into. */
  patch?: PatchSummary
  /** A runner's command as the sandbox saw it: exit code (null when killed) and the full log on disk. */
  run?: { exitCode: number | null; log: string; timedOut: boolean; lines?: number }
  /** A worker's `verify` command as this server ran it on the result (verify.ts), not as the agent reported. */
  verification?: Verification
  /** With an output_schema: the final answer's JSON value as parsed, validated against it (output-schema.ts). */
  output?: unknown
  /** A review: the patch, or the cwd and its uncommitted files, it looked at (review-cwd.ts). */
  reviewed?: Reviewed
  /** With an output_schema the answer did not match: the validator's message and the raw text, unverified. */
  outputError?: { message: string; unverified: string }
  /** Files that act on their own the turn created, changed or removed, each with its rule; the rest counted. */
  autorun?: { files: AutorunFlag[]; more?: number }
  /** Things the parent must look at before trusting the outcome (e.g. planted git metadata). */
  warnings?: string[]
  /** Shell commands the agent ran, with their exit codes when the tool reported one. */
  commands: Command[]
  /** Where the whole conversation can be read. */
  transcript?: string
  error?: string
  /** Why it failed, classified (failure.ts); `error` keeps the provider's own words. */
  errorKind?: FailureKind
  /** One sentence on what that kind of failure means. */
  advice?: string
  /** Seconds the provider asked to wait before retrying, when it said. */
  retryAfterS?: number
  /** What the parent should do next, when the outcome needs it. */
  next?: string
  /** The savings ledger's bytes: what the agent read and wrote, and logs on disk, against what was returned. */
  bytes?: Bytes
}

export interface Bytes {
  /** The conversation's content (text, reasoning, tool inputs and outputs). */
  transcript: number
  /** A runner's log on disk. */
  logs: number
  /** What the parent's model receives: the structured content's JSON (structured.ts), these figures included. */
  returned: number
  /** transcript + logs − returned, at least 0: what the parent did not have to read. */
  keptOut: number
}

/**
 * The ledger's bytes once the result is final. Both clients hand the model the structured content, not
 * the text block, so that is what is counted, with these very figures in it: their digits are part of
 * what the parent reads, so the count is repeated until it holds (it settles within a few rounds).
 */
export function bytesOf(result: DelegationResult, transcript: number, logs: number): Bytes {
  const withReturned = (returned: number): Bytes => ({
    transcript,
    logs,
    returned,
    keptOut: Math.max(0, transcript + logs - returned),
  })
  let bytes = withReturned(0)
  for (let round = 0; round < 8; round++) {
    const returned = Buffer.byteLength(JSON.stringify(toStructured({ ...result, bytes })))
    if (returned === bytes.returned) break
    bytes = withReturned(returned)
  }
  return bytes
}

const SHELL_TOOLS = /^(bash|sandbox_)/

export function fromTranscript(
  base: { role: Role; workspace: string; taskID?: string; sessionID?: string; durationMs: number; status: Status },
  transcript?: Transcript,
): DelegationResult {
  const tools = transcript?.tools ?? []
  return {
    ...base,
    report: transcript?.text ?? "",
    model: transcript?.route ? formatModel(transcript.route) : undefined,
    steps: transcript?.steps ?? 0,
    tokens: transcript?.tokens ?? { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: transcript?.cost ?? 0,
    tools,
    commands: tools
      .filter((call) => SHELL_TOOLS.test(call.tool) && call.target)
      .map((call) => ({ command: call.target, exitCode: call.exitCode })),
    error: transcript?.error,
  }
}

/** The text block: the report first, then one line of facts. Structured content carries the rest. */
export function renderText(result: DelegationResult): string {
  const facts = [
    `status: ${result.status}`,
    result.taskID && `task: ${result.taskID}`,
    result.model && `model: ${result.model}`,
    `steps: ${result.steps}`,
    `tokens: ${result.tokens.input} in / ${result.tokens.output} out`,
    `duration: ${(result.durationMs / 1000).toFixed(1)}s`,
    result.sessionID && `session: ${result.sessionID}`,
  ].filter(Boolean)
  const lines = [
    result.report || (result.status === "running" ? "(still running)" : "(no report)"),
    "",
    facts.join(" · "),
  ]
  if (result.taskID) lines.push(`watch: ${watchCommand(result.taskID)}`)
  if (result.files) {
    const files = result.files.map((file) => `${shownName(file.path)} (${file.change})`)
    lines.push(`files changed (git): ${files.join(", ") || "none"}`)
  }
  if (result.outOfScope) lines.push(`out of scope: ${result.outOfScope.map(shownName).join(", ")}`)
  if (result.commands.length)
    lines.push(`commands: ${result.commands.map((c) => `${c.command} → ${c.exitCode ?? "?"}`).join("; ")}`)
  if (result.patch) {
    const disk =
      result.patch.diskBytes === undefined
        ? ""
        : `; its worktree holds ${sizeText(result.patch.diskBytes)} on disk until patch_apply or patch_discard`
    const state = result.patch.state ? `${result.patch.state}, ` : ""
    lines.push(`patch: ${result.patch.id} (${state}digest ${result.patch.digest}${disk})`, result.patch.summary)
  }
  if (result.run)
    lines.push(
      `runner: exit code ${result.run.exitCode ?? "none"}${result.run.timedOut ? " (timed out)" : ""}, ` +
        `${result.run.lines ?? "?"} lines of output in ${result.run.log}`,
    )
  if (result.verification) {
    const { command, exitCode, durationMs, definitionChanged, asLeft } = result.verification
    lines.push(`verification (run by the server): ${command} → exit code ${exitCode ?? "none"} in ${durationMs}ms`)
    if (definitionChanged?.length) {
      const changed = definitionChanged.map(shownName).join(", ")
      lines.push(
        `  graded on the check's definition as before the worker; it changed ${changed}` +
          (asLeft ? ` (as it left them: exit code ${asLeft.exitCode ?? "none"})` : ""),
      )
    }
  }
  if (result.output !== undefined)
    lines.push(`output (validated against output_schema): ${JSON.stringify(result.output)}`)
  if (result.outputError) lines.push(`output_error: ${result.outputError.message}`)
  if (result.transcript) lines.push(`transcript: ${result.transcript}`)
  if (result.error) lines.push(`error${result.errorKind ? ` (${result.errorKind})` : ""}: ${result.error}`)
  else if (result.errorKind && result.errorKind !== "cancelled") lines.push(`error kind: ${result.errorKind}`)
  if (result.advice && result.errorKind !== "cancelled") lines.push(`advice: ${result.advice}`)
  for (const warning of result.warnings ?? []) lines.push(`warning: ${warning}`)
  if (result.next) lines.push(`next: ${result.next}`)
  return lines.join("\n")
}

/** The report always keeps this much, even when the other fields alone fill the limit: they are never cut. */
export const MIN_REPORT_BYTES = 256

/**
 * The report cut so the rendered text block fits `maxBytes`: its head and tail kept (the tail has the
 * conclusion, so it gets more), a marker between them saying how much was cut and where the whole is.
 * The other fields are never cut; the report gets what they leave, at least MIN_REPORT_BYTES.
 */
export function boundReport(result: DelegationResult, maxBytes: number): string {
  const report = Buffer.from(result.report)
  const others = Buffer.byteLength(renderText({ ...result, report: "-" })) - 1
  const budget = Math.max(MIN_REPORT_BYTES, maxBytes - others)
  if (report.length <= budget) return result.report
  const where = result.taskID
    ? `session_output with task_id "${result.taskID}"`
    : result.sessionID
      ? `session_output with session_id "${result.sessionID}"`
      : "the session"
  // The marker counts the cut as the whole report's size at most: its length is known before the cut is.
  const marker = (cut: number) =>
    `\n\n[… ${cut} of ${report.length} bytes cut from the middle of this report; read it whole with ${where} …]\n\n`
  const kept = Math.max(0, budget - Buffer.byteLength(marker(report.length)))
  const headEnd = charStart(report, Math.floor(kept * 0.4))
  let tailStart = report.length - (kept - headEnd)
  while (tailStart < report.length && isContinuation(report[tailStart]!)) tailStart++
  const head = report.subarray(0, headEnd).toString()
  return `${head}${marker(tailStart - headEnd)}${report.subarray(tailStart).toString()}`
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80

/** The largest offset ≤ `at` that does not split a UTF-8 character. */
function charStart(bytes: Buffer, at: number): number {
  let offset = at
  while (offset > 0 && isContinuation(bytes[offset]!)) offset--
  return offset
}
