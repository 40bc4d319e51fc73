// Every tool the plugin registers, as values: the sandbox tools for every server that loads the
// plugin, and the sandboxed file tools that replace OpenCode's built-ins on our shared server only
// (the replacement is global to the server that loads it, so the user's own OpenCode, which loads
// this file too, keeps its built-ins).
import { fileTools } from "./files/tools"
import { logGrepTool, logReadTool } from "./logs"
import { RUNNER_TOOL_SPECS, type RunnerTool } from "./roles"
import { runnerTool } from "./runner"
import { shellTool } from "./shell"
import type { PluginTool } from "./tool"
import type { SessionClient } from "./types"

export function pluginTools(sharedServer: boolean, client?: SessionClient): PluginTool[] {
  const runners = (Object.keys(RUNNER_TOOL_SPECS) as RunnerTool[]).map(runnerTool)
  const tools = [shellTool(client), logReadTool(), logGrepTool(), ...runners]
  return sharedServer ? [...tools, ...fileTools(client)] : tools
}
