// `doctor --live`: one real delegation through this program's MCP server, the real OpenCode, the
// rendered agents and the plugin, answered by the scripted model in a throwaway home, so a user can
// prove the whole path works without an account or spending tokens.
import type { Env } from "../config/flags"
import { describe } from "../errors"
import { runDemo } from "../model/demo"
import type { CheckResult } from "./check"

interface ToolCallSummary {
  tool: string
  status: string
}

export async function liveCheck(env: Env): Promise<CheckResult[]> {
  const started = Date.now()
  try {
    const outcome = await runDemo({ env })
    const calls = (outcome.structured?.tool_calls as ToolCallSummary[] | undefined) ?? []
    const failed = calls.filter((call) => call.status !== "completed")
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    if (outcome.status === "succeeded" && calls.length > 0 && failed.length === 0)
      return [
        {
          id: "live",
          status: "pass",
          detail:
            `scout delegation through OpenCode on the scripted model succeeded in ${seconds}s ` +
            `(${calls.map((c) => c.tool).join(", ")})`,
        },
      ]
    return [
      {
        id: "live",
        status: "fail",
        detail:
          `scout delegation ended ${outcome.status}` +
          `${failed.length ? `; failed tool calls: ${failed.map((c) => c.tool).join(", ")}` : ""}` +
          `\n${outcome.text.slice(0, 600)}`,
        fix: "Run `opencode-mcp-orchestrator demo --keep` and read the OpenCode server log it names.",
      },
    ]
  } catch (error) {
    return [
      {
        id: "live",
        status: "fail",
        detail: describe(error),
        fix: "Check that `opencode --version` runs and that the checks above pass.",
      },
    ]
  }
}
