// The structured content of a delegation's result: what both clients hand the parent's model (they pass
// structuredContent, not the text block, when a result has it), so the ledger counts its bytes.
import type { PatchFile } from "../../workspace/patches"
import type { DelegationResult } from "../records"
import { watchCommand } from "./watch-command"

/** A patch's changed file as every structured answer shows it (results, patch_show). Pure. */
export function fileChange(
  file: Pick<PatchFile, "path" | "oldPath" | "change" | "additions" | "deletions" | "binary">,
) {
  return {
    path: file.path,
    old_path: file.oldPath,
    change: file.change,
    additions: file.additions,
    deletions: file.deletions,
    binary: file.binary,
  }
}

/** The structured result (src/mcp/shared.ts resultShape describes it to clients). Pure. */
export function toStructured(result: DelegationResult) {
  return {
    task_id: result.taskID,
    status: result.status,
    role: result.userRole,
    report: result.report,
    model: result.model,
    steps: result.steps,
    tokens: {
      input: result.tokens.input,
      output: result.tokens.output,
      reasoning: result.tokens.reasoning,
      cache_read: result.tokens.cacheRead,
      cache_write: result.tokens.cacheWrite,
    },
    cost: result.cost,
    duration_ms: Math.round(result.durationMs),
    session_id: result.sessionID,
    watch: result.taskID && watchCommand(result.taskID),
    workspace: result.workspace,
    tool_calls: result.tools.map((call) => ({
      tool: call.tool,
      status: call.status,
      target: call.target,
      exit_code: call.exitCode,
    })),
    files_changed: result.files,
    out_of_scope: result.outOfScope,
    commands: result.commands.map((command) => ({ command: command.command, exit_code: command.exitCode })),
    transcript: result.transcript,
    error: result.error,
    error_kind: result.errorKind,
    advice: result.advice,
    retry_after_s: result.retryAfterS,
    fallback_from: result.fallbackFrom,
    next: result.next,
    autorun: result.autorun,
    warnings: result.warnings,
    patch: result.patch && {
      patch_id: result.patch.id,
      digest: result.patch.digest,
      summary: result.patch.summary,
      bytes: result.patch.bytes,
      disk_bytes: result.patch.diskBytes,
      state: result.patch.state,
      files: result.patch.files.map((file) => ({
        ...fileChange(file),
        old_mode: file.oldMode,
        new_mode: file.newMode,
      })),
    },
    verification: result.verification && {
      command: result.verification.command,
      exit_code: result.verification.exitCode,
      duration_ms: result.verification.durationMs,
      digest: result.verification.digest,
      definition_changed: result.verification.definitionChanged,
      as_left: result.verification.asLeft && {
        exit_code: result.verification.asLeft.exitCode,
        duration_ms: result.verification.asLeft.durationMs,
        digest: result.verification.asLeft.digest,
      },
      unfrozen: result.verification.unfrozen,
    },
    output: result.output,
    reviewed: result.reviewed && {
      patch_id: result.reviewed.patchId,
      cwd: result.reviewed.cwd,
      files: result.reviewed.files?.map(({ path, change }) => ({ path, change })),
      more_files: result.reviewed.more,
    },
    output_error: result.outputError,
    exit_code: result.run?.exitCode,
    log: result.run?.log,
    bytes: result.bytes && {
      transcript: result.bytes.transcript,
      logs: result.bytes.logs,
      returned: result.bytes.returned,
      kept_out: result.bytes.keptOut,
    },
  }
}
