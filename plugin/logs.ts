// sandbox_log_read and sandbox_log_grep: the runner agents' way into a log the digest summarised.
// Only runner agents may call them, and only on runs their own session made, so a log (which may
// hold whatever a command printed) is never read from another session.
import { grepLog, listRuns, logPath, readRun, readSlice, type RunRecord } from "../src/runner/logs"
import { readInvocation } from "./env"
import { isRunnerAgent, Refused } from "./roles"
import grepText from "./text/sandbox_log_grep.md" with { type: "text" }
import readText from "./text/sandbox_log_read.md" with { type: "text" }
import { arg, defineTool, type PluginTool } from "./tool"
import type { ToolContext, ToolOutput } from "./types"

const runIdArg = () => arg.optionalText("The run_id the digest gave (empty: the latest run of this session).")

/** The run a call names (or this session's latest), refused unless this session made it. */
async function ownRun(
  runsDir: string,
  runId: string | undefined,
  context: Pick<ToolContext, "agent" | "sessionID">,
): Promise<RunRecord> {
  if (!isRunnerAgent(context.agent))
    throw new Refused(`Runner logs are only for the orchestrator's runner agents, not "${context.agent}".`)
  if (runId?.trim()) {
    const run = await readRun(runsDir, runId.trim())
    if (!run || run.sessionID !== context.sessionID)
      throw new Refused(
        `No run ${JSON.stringify(runId)} of this session; ` +
          "pass the run_id the digest gave, or an empty one for the latest.",
      )
    return run
  }
  const own = (await listRuns(runsDir)).filter((run) => run.sessionID === context.sessionID)
  const latest = own.sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt))[0]
  if (!latest) throw new Refused("This session has no runs yet: run the command first.")
  return latest
}

export const logReadTool = (): PluginTool =>
  defineTool({
    name: "sandbox_log_read",
    description: readText,
    args: {
      run_id: runIdArg(),
      offset: arg.integer("First line to read (1-based).", { minimum: 1, fallback: 1, zeroIsUnset: true }),
      limit: arg.integer("How many lines (at most 200).", {
        minimum: 1,
        maximum: 200,
        fallback: 50,
        zeroIsUnset: true,
      }),
    },
    async execute({ run_id, offset, limit }, context): Promise<ToolOutput> {
      const { paths } = await readInvocation()
      const run = await ownRun(paths.runsDir, run_id, context)
      const output = await readSlice(logPath(paths.runsDir, run.id), offset, limit)
      return { title: `${run.id} from line ${offset}`, output, metadata: { run_id: run.id } }
    },
  })

export const logGrepTool = (): PluginTool =>
  defineTool({
    name: "sandbox_log_grep",
    description: grepText,
    args: {
      run_id: runIdArg(),
      pattern: arg.text("Regular expression or text to find (case-insensitive)."),
    },
    async execute({ run_id, pattern }, context): Promise<ToolOutput> {
      const { paths } = await readInvocation()
      const run = await ownRun(paths.runsDir, run_id, context)
      const output = await grepLog(logPath(paths.runsDir, run.id), pattern)
      return { title: `${run.id} /${pattern}/`, output, metadata: { run_id: run.id } }
    },
  })
