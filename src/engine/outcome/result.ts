// The result a parent receives: a short report plus fields it can check.
import type { Role } from "../../config/schema"
import { formatModel } from "../../opencode/session"
import type { Transcript } from "../../opencode/transcript"
import { sizeText } from "../../workspace/disk"
import { shownName } from "../../workspace/names"
import { toStructured } from "./structured"
import type { Bytes, DelegationResult, Status } from "../records"
import { watchCommand } from "./watch-command"

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
