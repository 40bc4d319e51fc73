// Which orchestrator agent may call which sandbox tool, and under which sandbox profile. The agent
// names mirror src/engine/agents.ts (importing it would pull zod and the templates into the bundle);
// test/plugin/roles.test.ts fails if the two ever disagree.
import type { SandboxProfile } from "../src/sandbox"

export const ORCHESTRATOR_PREFIX = "opencode-orchestrator-"

export type RunnerTool = "sandbox_run_ro" | "sandbox_run" | "sandbox_run_network_ro" | "sandbox_run_network"

/** Each runner tool: the one agent allowed to call it and the profile it runs under. */
export const RUNNER_TOOL_SPECS: Record<RunnerTool, { agent: string; profile: SandboxProfile & { kind: "runner" } }> = {
  sandbox_run_ro: { agent: `${ORCHESTRATOR_PREFIX}runner`, profile: { kind: "runner", workspace: "read_only", network: "disabled" } },
  sandbox_run: { agent: `${ORCHESTRATOR_PREFIX}runner-writable`, profile: { kind: "runner", workspace: "writable", network: "disabled" } },
  sandbox_run_network_ro: { agent: `${ORCHESTRATOR_PREFIX}runner-network`, profile: { kind: "runner", workspace: "read_only", network: "host" } },
  sandbox_run_network: { agent: `${ORCHESTRATOR_PREFIX}runner-writable-network`, profile: { kind: "runner", workspace: "writable", network: "host" } },
}

/** sandbox_shell's profile per agent: scout reads, worker writes (never .git). */
export const SHELL_PROFILES: Record<string, SandboxProfile> = {
  [`${ORCHESTRATOR_PREFIX}scout`]: { kind: "scout" },
  [`${ORCHESTRATOR_PREFIX}worker`]: { kind: "worker" },
}

export const isOrchestratorAgent = (agent: string | undefined) => agent?.startsWith(ORCHESTRATOR_PREFIX) ?? false

export const isRunnerAgent = (agent: string) => Object.values(RUNNER_TOOL_SPECS).some((spec) => spec.agent === agent)

export class Refused extends Error {
  override readonly name = "Refused"
}

export function shellProfile(agent: string): SandboxProfile {
  const profile = SHELL_PROFILES[agent]
  if (!profile) throw new Refused(`sandbox_shell is only for the orchestrator's scout and worker agents, not "${agent}".`)
  return profile
}

export function runnerProfile(tool: RunnerTool, agent: string): SandboxProfile {
  const spec = RUNNER_TOOL_SPECS[tool]
  if (spec.agent !== agent) throw new Refused(`${tool} is only for the agent ${spec.agent}, not "${agent}".`)
  return spec.profile
}
