// sandbox_shell: one command under bwrap with the calling agent's profile (scout read-only, worker
// workspace-writable; a scoped worker's only in its scope, read from its session), output capped and a
// timeout that kills everything the command started.
import { LIMIT_SPECS } from "../src/config/limits"
import { hostFs, planSandbox, runSandboxed, type SandboxRunResult } from "../src/sandbox"
import { admitted, readInvocation } from "./env"
import { shellProfile } from "./roles"
import { sessionScope, type SessionScope } from "./scope"
import description from "./text/sandbox_shell.md" with { type: "text" }
import { arg, defineTool, type PluginTool } from "./tool"
import type { SessionClient, ToolOutput } from "./types"

export const SHELL_COMMAND = ["/bin/bash", "-c"] as const

/** stdout then stderr, cut to `limit` bytes in total, with notes a model can act on. */
export function shellOutput(result: SandboxRunResult, limit: number, timeoutMs: number): string {
  if (result.failure)
    return `The sandbox could not start (${result.failure.code}): ${result.failure.detail}\n${result.failure.hint}`
  let text =
    result.stdout +
    (result.stderr ? `${result.stdout && !result.stdout.endsWith("\n") ? "\n" : ""}${result.stderr}` : "")
  const bytes = Buffer.byteLength(text)
  const notes: string[] = []
  if (bytes > limit || result.truncated) {
    text = Buffer.from(text).subarray(0, limit).toString("utf8")
    notes.push(`[output cut at ${limit} bytes; narrow the command, e.g. with head, grep or tail]`)
  }
  if (result.timedOut)
    notes.push(`[timed out after ${Math.round(timeoutMs / 1000)}s; the command and everything it started were killed]`)
  if (result.aborted) notes.push("[cancelled; the command and everything it started were killed]")
  notes.push(`[exit code: ${result.exitCode ?? `none (${result.signal ?? "killed"})`}]`)
  return `${text}${text && !text.endsWith("\n") ? "\n" : ""}${notes.join("\n")}`
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f]/g

/** At most this many read-only paths are named in the note; the rest are counted. */
const NAMED = 10

/** One line saying what a scoped worker's command could not write, or undefined when nothing. */
export function scopeNote(scope: SessionScope, readOnly: readonly string[] | undefined): string | undefined {
  if (scope.kind === "unknown")
    return `[read-only: the whole workspace, because this session's scope could not be used (${scope.why})]`
  if (scope.kind === "open" || !readOnly?.length) return undefined
  const more = readOnly.length > NAMED ? `, and ${readOnly.length - NAMED} more` : ""
  // The names are the agent's: a newline in one must not turn this line into several.
  const names = readOnly.slice(0, NAMED).join(", ").replace(CONTROL, "?")
  return `[read-only in your scope: ${names}${more}]`
}

const scopeOf = (scope: SessionScope) =>
  scope.kind === "scoped" ? scope.scope : scope.kind === "unknown" ? [] : undefined

export function shellTool(client?: SessionClient): PluginTool {
  const limits = LIMIT_SPECS
  return defineTool({
    name: "sandbox_shell",
    description: description
      .replace(
        "{{access}}",
        "Scout: the workspace is read-only. Worker: the workspace is writable; with a scope, only the scope's " +
          "existing paths and new files under its directories.",
      )
      .replace("{{maxBytes}}", `${limits.shellMaxOutputBytes.fallback} by default`)
      .replace("{{timeoutSeconds}}", `${limits.shellTimeoutMs.fallback / 1000} by default`),
    args: { command: arg.text("The command, run with bash -c in the working directory.") },
    async execute({ command }, context): Promise<ToolOutput> {
      const profile = shellProfile(context.agent)
      const invocation = await readInvocation()
      const { limits: env, host } = invocation
      const workspace = admitted(context.directory, invocation)
      // Only a writer's mounts depend on its scope: a scout's session is never scoped and never writes.
      const scope: SessionScope =
        profile.kind === "worker" ? await sessionScope(client, context.sessionID, context.directory) : { kind: "open" }
      const plan = planSandbox({ profile, workspace, host, scope: scopeOf(scope) }, hostFs)
      const note = scopeNote(scope, plan.readOnlyScope)
      const result = await runSandboxed(plan, [...SHELL_COMMAND, command], {
        timeoutMs: env.shellTimeoutMs,
        maxOutputBytes: env.shellMaxOutputBytes,
        signal: context.abort,
      })
      return {
        title: command.slice(0, 120),
        output: (note ? `${note}\n` : "") + shellOutput(result, env.shellMaxOutputBytes, env.shellTimeoutMs),
        metadata: {
          exit: result.exitCode,
          profile: plan.profile,
          scoped: scope.kind !== "open",
          timedOut: result.timedOut,
          truncated: result.truncated,
        },
      }
    },
  })
}
