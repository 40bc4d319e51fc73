// The orchestrator's agent names and which sandbox tool each may call. Kept apart from render.ts so
// the plugin can import them: nothing here pulls zod or the prompt templates into its bundle (the
// Role import is type-only), and nothing runs at import time.
import type { Role } from "../config/schema"
import { FILES_MARKER } from "../sandbox/shared-server"

export const AGENT_PREFIX = "opencode-orchestrator-"

export type RunnerAccess = "read_only" | "writable"
export type RunnerNetwork = "disabled" | "host"

/** The sandbox tool each runner agent may use (one per access × network combination). */
export const RUNNER_TOOLS: Record<RunnerAccess, Record<RunnerNetwork, string>> = {
  read_only: { disabled: "sandbox_run_ro", host: "sandbox_run_network_ro" },
  writable: { disabled: "sandbox_run", host: "sandbox_run_network" },
}

/** The runner agents' way into the log their command wrote (the digest points at it). */
export const LOG_TOOLS = ["sandbox_log_read", "sandbox_log_grep"]

export const SANDBOX_TOOLS = [
  "sandbox_shell",
  ...Object.values(RUNNER_TOOLS).flatMap((byNet) => Object.values(byNet)),
  ...LOG_TOOLS,
  FILES_MARKER,
]

export function runnerAgentName(access: RunnerAccess, network: RunnerNetwork) {
  const suffix = [access === "writable" ? "writable" : "", network === "host" ? "network" : ""].filter(Boolean)
  return `${AGENT_PREFIX}runner${suffix.length ? `-${suffix.join("-")}` : ""}`
}

export const agentName = (role: Exclude<Role, "runner">) => `${AGENT_PREFIX}${role}`
