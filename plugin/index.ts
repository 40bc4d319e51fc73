// The OpenCode plugin: sandbox tools, guards and provider quirks for orchestrator agents. Bundled
// into one file at build time (scripts/build-plugin.ts) and embedded in the binary. Only the default
// export: OpenCode may treat every export of a plugin module as a plugin of its own.
import { hostFs } from "../src/sandbox"
import { isSharedServer, readInvocation, sessionWorkspace } from "./env"
import { READ_TOOLS, refuseCall, WRITE_TOOLS } from "./guards"
import { omitHiddenReasoning } from "./quirks"
import { pluginTools } from "./registry"
import { isOrchestratorAgent } from "./roles"
import hostShellRefused from "./text/host_shell_refused.md" with { type: "text" }
import { toolRecord } from "./tool"
import type { Plugin } from "./types"

/** Sessions remembered for the guard; the oldest are forgotten first (a long-lived server sees many). */
const MAX_SESSIONS = 10_000

const OrchestratorPlugin: Plugin = async (input) => {
  // `tool.execute.before` is not told the agent, but `chat.params` (before every model request, so
  // before any tool call of that step) is: remember it per session.
  const agents = new Map<string, string>()
  return {
    tool: toolRecord(pluginTools(isSharedServer(), input.client)),
    "chat.params": async ({ sessionID, agent }) => {
      agents.delete(sessionID)
      agents.set(sessionID, agent)
      if (agents.size > MAX_SESSIONS) agents.delete(agents.keys().next().value!)
    },
    // Muse Spark on OpenCode Console/Zen: our agents' requests leave the hidden reasoning out (quirks.ts).
    "experimental.chat.messages.transform": async (_input, { messages }) => {
      omitHiddenReasoning(messages)
    },
    // Our shared server offers no unsandboxed shell to anyone, a holder of its password included: every
    // command OpenCode would start on the host itself passes this hook first (verified on 1.18.33 for
    // the bash tool, /session/:id/shell, /pty and /api/pty). Commands run in bwrap through our tools.
    "shell.env": async () => {
      if (isSharedServer()) throw new Error(hostShellRefused.trim())
    },
    "tool.execute.before": async ({ tool, sessionID }, { args }) => {
      if (!isOrchestratorAgent(agents.get(sessionID))) return
      if (tool !== "bash" && !WRITE_TOOLS.has(tool) && !READ_TOOLS.has(tool)) return
      const { host, paths } = await readInvocation()
      const why = refuseCall({ tool, args, workspace: sessionWorkspace(input.directory, paths), host }, hostFs)
      if (why) throw new Error(why)
    },
  }
}

export default OrchestratorPlugin
