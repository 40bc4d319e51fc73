// The runner's four sandbox tools (read-only/writable × no network/host network), each callable only
// by its own agent. The command's full output goes to a log under the state dir; the model gets the
// deterministic digest of it. Old runs are pruned by age and count after each run.
import { RUNNER_TIMEOUT } from "../src/runner/brief"
import { renderDigest } from "../src/runner/digest"
import { createRun, digestRun, logPath, pruneRuns, runFacts, saveRun } from "../src/runner/logs"
import { hostFs, planSandbox, runSandboxed } from "../src/sandbox"
import { admitted, readInvocation } from "./env"
import { RUNNER_TOOL_SPECS, runnerProfile, type RunnerTool } from "./roles"
import { SHELL_COMMAND } from "./shell"
import description from "./text/sandbox_run.md" with { type: "text" }
import { arg, defineTool, type PluginTool } from "./tool"
import type { ToolOutput } from "./types"

/** What the runner keeps in memory of each stream; the log has everything. */
const IN_MEMORY_BYTES = 4096

export function runnerTool(tool: RunnerTool): PluginTool {
  const { profile } = RUNNER_TOOL_SPECS[tool]
  return defineTool({
    name: tool,
    description: description
      .replace(
        "{{access}}",
        profile.workspace === "writable"
          ? "the workspace is writable (Git metadata stays read-only)"
          : "the workspace is read-only",
      )
      .replace("{{network}}", profile.network === "host" ? "shared with the host (trusted commands only)" : "disabled"),
    args: {
      command: arg.text("The command exactly as the task gives it, run with bash -c in the working directory."),
      timeout_seconds: arg.integer("The command's timeout in seconds, as the task gives it.", {
        minimum: RUNNER_TIMEOUT.min,
        maximum: RUNNER_TIMEOUT.max,
        fallback: RUNNER_TIMEOUT.fallback,
      }),
    },
    async execute({ command, timeout_seconds: seconds }, context): Promise<ToolOutput> {
      runnerProfile(tool, context.agent)
      const invocation = await readInvocation()
      const { limits, host, paths } = invocation
      const plan = planSandbox({ profile, workspace: admitted(context.directory, invocation), host }, hostFs)
      const run = await createRun(paths.runsDir, {
        sessionID: context.sessionID,
        agent: context.agent,
        profile: plan.profile,
        workspace: plan.workspace,
        command,
      })
      const log = logPath(paths.runsDir, run.id)
      const result = await runSandboxed(plan, [...SHELL_COMMAND, command], {
        timeoutMs: seconds * 1000,
        maxOutputBytes: IN_MEMORY_BYTES,
        signal: context.abort,
        logFile: log,
        logLimitBytes: limits.runnerLogLimitBytes,
      })
      const digest = await digestRun(run, log, result)
      await saveRun(paths.runsDir, run)
      // Pruning old runs is housekeeping: failing it costs disk space later, never this run's result.
      const retention = { hours: limits.runRetentionHours, count: limits.runRetentionCount }
      await pruneRuns(paths.runsDir, retention, [run.id]).catch(() => undefined)
      const failure = result.failure
        ? `The sandbox could not start (${result.failure.code}): ${result.failure.detail}\n${result.failure.hint}\n`
        : ""
      const output = failure + renderDigest(digest, { ...runFacts(result, log), runId: run.id })
      return {
        title: command.slice(0, 120),
        output,
        metadata: { exit: result.exitCode, run_id: run.id, log, timedOut: result.timedOut },
      }
    },
  })
}
