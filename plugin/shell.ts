// sandbox_shell: one command under bwrap with the calling agent's profile (scout read-only, worker
// workspace-writable), output capped and a timeout that kills everything the command started.
import { LIMIT_SPECS } from "../src/config/limits"
import { hostFs, planSandbox, runSandboxed, type SandboxRunResult } from "../src/sandbox"
import { admitted, readInvocation } from "./env"
import { shellProfile } from "./roles"
import description from "./text/sandbox_shell.md" with { type: "text" }
import { arg, defineTool, type PluginTool } from "./tool"
import type { ToolOutput } from "./types"

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

export function shellTool(): PluginTool {
  const limits = LIMIT_SPECS
  return defineTool({
    name: "sandbox_shell",
    description: description
      .replace("{{access}}", "Scout: the workspace is read-only. Worker: the workspace is writable.")
      .replace("{{maxBytes}}", `${limits.shellMaxOutputBytes.fallback} by default`)
      .replace("{{timeoutSeconds}}", `${limits.shellTimeoutMs.fallback / 1000} by default`),
    args: { command: arg.text("The command, run with bash -c in the working directory.") },
    async execute({ command }, context): Promise<ToolOutput> {
      const profile = shellProfile(context.agent)
      const invocation = await readInvocation()
      const { limits: env, host } = invocation
      const plan = planSandbox({ profile, workspace: admitted(context.directory, invocation), host }, hostFs)
      const result = await runSandboxed(plan, [...SHELL_COMMAND, command], {
        timeoutMs: env.shellTimeoutMs,
        maxOutputBytes: env.shellMaxOutputBytes,
        signal: context.abort,
      })
      return {
        title: command.slice(0, 120),
        output: shellOutput(result, env.shellMaxOutputBytes, env.shellTimeoutMs),
        metadata: {
          exit: result.exitCode,
          profile: plan.profile,
          timedOut: result.timedOut,
          truncated: result.truncated,
        },
      }
    },
  })
}
