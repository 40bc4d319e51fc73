// Which orchestrator agent may call which sandbox tool, and under which sandbox profile. The names
// come from src/agents/names.ts, the one module of src/agents with no zod or templates in it (the
// bundle must stay small); test/plugin/units.test.ts checks this table against the rendered agents.
import { agentName, AGENT_PREFIX, runnerAgentName } from "../src/agents/names"
import type { SandboxProfile } from "../src/sandbox"

export type RunnerTool = "sandbox_run_ro" | "sandbox_run" | "sandbox_run_network_ro" | "sandbox_run_network"

type RunnerProfile = SandboxProfile & { kind: "runner" }

function runnerSpec(workspace: RunnerProfile["workspace"], network: RunnerProfile["network"]) {
  return { agent: runnerAgentName(workspace, network), profile: { kind: "runner", workspace, network } as const }
}

/** Each runner tool: the one agent allowed to call it and the profile it runs under. */
export const RUNNER_TOOL_SPECS: Record<RunnerTool, { agent: string; profile: RunnerProfile }> = {
  sandbox_run_ro: runnerSpec("read_only", "disabled"),
  sandbox_run: runnerSpec("writable", "disabled"),
  sandbox_run_network_ro: runnerSpec("read_only", "host"),
  sandbox_run_network: runnerSpec("writable", "host"),
}

/** sandbox_shell's profile per agent: scout reads, worker writes (never .git). */
export const SHELL_PROFILES: Record<string, SandboxProfile> = {
  [agentName("scout")]: { kind: "scout" },
  [agentName("worker")]: { kind: "worker" },
}

export const isOrchestratorAgent = (agent: string | undefined) => agent?.startsWith(AGENT_PREFIX) ?? false

export const isRunnerAgent = (agent: string) => Object.values(RUNNER_TOOL_SPECS).some((spec) => spec.agent === agent)

export class Refused extends Error {
  override readonly name = "Refused"
}

export function shellProfile(agent: string): SandboxProfile {
  const profile = SHELL_PROFILES[agent]
  if (!profile)
    throw new Refused(`sandbox_shell is only for the orchestrator's scout and worker agents, not "${agent}".`)
  return profile
}

export function runnerProfile(tool: RunnerTool, agent: string): SandboxProfile {
  const spec = RUNNER_TOOL_SPECS[tool]
  if (spec.agent !== agent) throw new Refused(`${tool} is only for the agent ${spec.agent}, not "${agent}".`)
  return spec.profile
}
