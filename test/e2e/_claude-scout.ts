// The world the Claude Code native-task tests share: a repository, the scripted model with a slow scout
// (its session answers after `sessionMs`, or plays the `scout` script given) and a parent whose first turn
// calls it, an isolated home (with the `config` given), and the interactive Claude Code sessions started in
// it, all stopped by `stop`.
import { rm } from "node:fs/promises"
import { createRepository } from "../../src/model/demo"
import type { ConfigInput } from "../../src/config/schema"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import { TEST_PATH } from "../helpers/mcp"
import { startClaudeTui, type ClaudeTui } from "./_claude-tui"

export const REPORT = "tally is in README.md"
const SYNC_BUDGET = { OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" }
const TOOLS = ["mcp__orch__scout", "mcp__orch__task_status", "mcp__orch__task_result"]

export type Turn = ScriptInput["turns"][number]

export interface ScoutWorld {
  model: ScriptedModel
  home: IsolatedHome
  repo: string
  /** The parent's first turn: the scout, then its answer. */
  scoutTurn: Turn
  /** A fresh Claude Code session (`env` reaches it) with our server behind a 1 s sync budget. */
  tui(name: string, env?: Record<string, string>): Promise<ClaudeTui>
  stop(): Promise<void>
}

export async function startScoutWorld(options: {
  sessionMs: number
  scout?: ScriptInput
  config?: Partial<ConfigInput>
}): Promise<ScoutWorld> {
  const { sessionMs, config } = options
  const repo = await createRepository("oc-orch-repo-", { "README.md": "# tally\n" })
  const scoutTurn: Turn = {
    steps: [
      { tool: "mcp__orch__scout", args: { cwd: repo, task: "Where is tally? [script:slow]" } },
      { text: "Scout answered: {{lastToolOutput}}" },
    ],
  }
  const model = await startScriptedModel({
    scripts: {
      slow: options.scout ?? { turns: [{ steps: [{ text: REPORT, delayMs: sessionMs }] }] },
      // The client's task notification arrives as the next user message.
      parent: { turns: [scoutTurn, { steps: [{ text: "Noted: {{userMessage}}" }] }] },
    },
  })
  const home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH }, config })
  const tuis: ClaudeTui[] = []
  return {
    model,
    home,
    repo,
    scoutTurn,
    async tui(name, env = {}) {
      const tui = await startClaudeTui({
        home,
        model,
        cwd: repo,
        name,
        env,
        serveEnv: SYNC_BUDGET,
        allowedTools: TOOLS,
      })
      tuis.push(tui)
      return tui
    },
    async stop() {
      for (const tui of tuis) await tui.stop()
      await stopServer(home.paths)
      await model.stop()
      await home.dispose()
      await rm(repo, { recursive: true, force: true })
    },
  }
}
