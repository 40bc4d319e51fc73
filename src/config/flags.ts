// Every environment variable the program reads, in one place. The CLI reads `process.env` once and
// hands the snapshot down; everything below takes `Flags` (or the raw snapshot) as data.
import { homedir } from "node:os"
import { MODES, type Mode } from "../policy/mode"

export type Env = Record<string, string | undefined>

export interface Flags {
  home: string
  xdgConfigHome: string
  xdgDataHome: string
  xdgStateHome: string
  xdgCacheHome: string
  /** Path or name of the opencode executable (default: `opencode` on PATH). */
  opencodeBin: string
  /** `OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS=1`: keep delegated sessions for diagnosis. */
  preserveSessions: boolean
  /** `OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS`: deployment-wide operation deadline override. */
  bridgeTimeoutMs?: number
  /** `OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS`: how long a tool call waits before returning `running`. */
  syncBudgetMs?: number
  /** `OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES`: the largest brief a delegation accepts. */
  maxBriefBytes: number
  /** `OPENCODE_MCP_ORCHESTRATOR_MODE`: the delegation mode for every workspace this server serves (src/policy/mode.ts). */
  mode?: Mode
  /** The raw snapshot, for the few places that pass the environment on (the OpenCode server). */
  env: Env
}

/** A brief is a self-contained task, not a file dump: 64 KiB holds a long spec with its excerpts. */
export const MAX_BRIEF_BYTES = 65_536

function strictInt(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined || raw === "") return undefined
  if (!/^\d+$/.test(raw)) throw new FlagError(name, raw, `an integer from ${min} to ${max}`)
  const value = Number(raw)
  if (value < min || value > max) throw new FlagError(name, raw, `an integer from ${min} to ${max}`)
  return value
}

export class FlagError extends Error {
  override readonly name = "FlagError"
  constructor(
    readonly variable: string,
    readonly value: string,
    readonly expected: string,
  ) {
    super(`${variable}=${JSON.stringify(value)} is invalid: expected ${expected}.`)
  }
}

function strictEnum<T extends string>(name: string, raw: string | undefined, values: readonly T[]): T | undefined {
  if (raw === undefined || raw === "") return undefined
  if (!(values as readonly string[]).includes(raw)) throw new FlagError(name, raw, `one of ${values.join(", ")}`)
  return raw as T
}

export function readFlags(env: Env): Flags {
  const home = env.HOME || homedir()
  const xdg = (name: string, fallback: string) => (env[name]?.startsWith("/") ? env[name]! : `${home}/${fallback}`)
  return {
    home,
    xdgConfigHome: xdg("XDG_CONFIG_HOME", ".config"),
    xdgDataHome: xdg("XDG_DATA_HOME", ".local/share"),
    xdgStateHome: xdg("XDG_STATE_HOME", ".local/state"),
    xdgCacheHome: xdg("XDG_CACHE_HOME", ".cache"),
    opencodeBin: env.OPENCODE_MCP_ORCHESTRATOR_OPENCODE || "opencode",
    preserveSessions: env.OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS === "1",
    bridgeTimeoutMs: strictInt("OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS", env.OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS, 1000, 3_600_000),
    syncBudgetMs: strictInt("OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS", env.OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS, 1000, 3_600_000),
    maxBriefBytes: strictInt("OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES", env.OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES, 1024, 1_048_576) ?? MAX_BRIEF_BYTES,
    mode: strictEnum("OPENCODE_MCP_ORCHESTRATOR_MODE", env.OPENCODE_MCP_ORCHESTRATOR_MODE, MODES),
    env,
  }
}
