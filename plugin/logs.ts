// sandbox_log_read and sandbox_log_grep: the runner agents' way into a log the digest summarised.
// Only runner agents may call them, and only on runs their own session made, so a log (which may
// hold whatever a command printed) is never read from another session.
import { grepLog, listRuns, logPath, readRun, readSlice, type RunRecord } from "../src/runner/logs"
import { readInvocation } from "./env"
import { isRunnerAgent, Refused } from "./roles"
import grepText from "./text/sandbox_log_grep.md" with { type: "text" }
import readText from "./text/sandbox_log_read.md" with { type: "text" }
import type { ToolContext, ToolDefinition, ToolOutput } from "./types"

const RUN_ID_ARG = {
  type: "string",
  description: "The run_id the digest gave (empty: the latest run of this session).",
} as const

/** The run a call names (or this session's latest), refused unless this session made it. */
export async function ownRun(
  runsDir: string,
  runId: unknown,
  context: Pick<ToolContext, "agent" | "sessionID">,
): Promise<RunRecord> {
  if (!isRunnerAgent(context.agent))
    throw new Refused(`Runner logs are only for the orchestrator's runner agents, not "${context.agent}".`)
  if (typeof runId === "string" && runId.trim()) {
    const run = await readRun(runsDir, runId.trim())
    if (!run || run.sessionID !== context.sessionID)
      throw new Refused(
        `No run ${JSON.stringify(runId)} of this session; pass the run_id the digest gave, or an empty one for the latest.`,
      )
    return run
  }
  const own = (await listRuns(runsDir)).filter((run) => run.sessionID === context.sessionID)
  const latest = own.sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))[0]
  if (!latest) throw new Refused("This session has no runs yet: run the command first.")
  return latest
}

const integer = (value: unknown, fallback: number) => {
  const number = typeof value === "string" ? Number(value) : value
  return typeof number === "number" && Number.isFinite(number) ? Math.floor(number) : fallback
}

export function logReadTool(): ToolDefinition {
  return {
    description: readText,
    args: {
      run_id: RUN_ID_ARG,
      offset: { type: "integer", minimum: 1, description: "First line to read (1-based)." },
      limit: { type: "integer", minimum: 1, maximum: 200, description: "How many lines (at most 200)." },
    },
    async execute(args, context): Promise<ToolOutput> {
      const { paths } = await readInvocation()
      const run = await ownRun(paths.runsDir, args.run_id, context)
      const offset = integer(args.offset, 1)
      const output = await readSlice(logPath(paths.runsDir, run.id), offset, integer(args.limit, 50))
      return { title: `${run.id} from line ${offset}`, output, metadata: { run_id: run.id } }
    },
  }
}

export function logGrepTool(): ToolDefinition {
  return {
    description: grepText,
    args: {
      run_id: RUN_ID_ARG,
      pattern: { type: "string", description: "Regular expression or text to find (case-insensitive)." },
    },
    async execute(args, context): Promise<ToolOutput> {
      const { paths } = await readInvocation()
      const run = await ownRun(paths.runsDir, args.run_id, context)
      const pattern = typeof args.pattern === "string" ? args.pattern : ""
      const output = await grepLog(logPath(paths.runsDir, run.id), pattern)
      return { title: `${run.id} /${pattern}/`, output, metadata: { run_id: run.id } }
    },
  }
}
