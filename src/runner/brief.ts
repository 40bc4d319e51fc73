// The runner agent's brief, built from the MCP call: the command verbatim (fenced, so a weak model
// copies it whole), the timeout to pass, the objective and the expected outcome. Pure.

/** A runner command's timeout in seconds: bounds and the default when a call gives none. */
export const RUNNER_TIMEOUT = { min: 1, max: 3600, fallback: 900 } as const

export interface RunnerRequest {
  command: string
  objective: string
  expected?: string
  timeoutSeconds: number
  /** The sandbox tool this runner agent has (sandbox_run_ro, sandbox_run, …). */
  tool: string
}

/** A fence longer than any backtick run in the command, so the command cannot close it. */
function fence(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length))
  return "`".repeat(Math.max(3, longest + 1))
}

export function runnerBrief(request: RunnerRequest): string {
  const marks = fence(request.command)
  return [
    `Run this command once with \`${request.tool}\`, passing it exactly as written and timeout_seconds ` +
      `${request.timeoutSeconds}:`,
    "",
    marks,
    request.command,
    marks,
    "",
    `Objective: ${request.objective}`,
    request.expected
      ? `Expected outcome: ${request.expected}`
      : "No expected outcome was given; judge from the exit code and the output.",
    "",
    "Then report as your instructions say: the exit code, whether the objective was met, the failures that matter " +
      "(test names, file:line, messages), and the log path.",
  ].join("\n")
}
