// Every environment variable the program reads, in one place (a test in test/config holds everyone
// else to it). The CLI takes `process.env` through `flagsFromProcess` once, the plugin through its
// own reader (plugin/env.ts) on each invocation; everything below receives `Flags` as data.
import { homedir } from "node:os"
import { fail } from "../errors"
import { MODES, type Mode } from "../policy/mode"
import { parseInteger } from "./integer"
import { LIMIT_SPECS, type SandboxLimits } from "./limits"

export type Env = Record<string, string | undefined>

export interface SandboxFlags {
  /** `OPENCODE_SANDBOX_*` limits (limits.ts), defaults filled in. */
  limits: SandboxLimits
  /** `OPENCODE_SANDBOX_TOOLCHAIN_DIRS`: colon-separated directories mounted read-only and added to PATH. */
  toolchainDirs?: string
}

export interface Flags {
  home: string
  xdgConfigHome: string
  xdgDataHome: string
  xdgStateHome: string
  xdgCacheHome: string
  /** PATH, where executables are looked up; undefined when unset. */
  path?: string
  /** TMPDIR when absolute, else /tmp. */
  tmpDir: string
  /** `${CODEX_HOME:-~/.codex}`, as Codex itself reads it. */
  codexHome: string
  /** CLAUDE_CONFIG_DIR when absolute; Claude Code then keeps `.claude.json` and `skills/` there. */
  claudeConfigDir?: string
  /** Path or name of the opencode executable (default: `opencode` on PATH). */
  opencodeBin: string
  /** `OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS=1`: keep delegated sessions for diagnosis. */
  preserveSessions: boolean
  /** `OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS`: deployment-wide operation deadline override. */
  bridgeTimeoutMs?: number
  /** `OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS`: how long a tool call waits before returning `running`. */
  syncBudgetMs?: number
  /**
   * `OPENCODE_MCP_ORCHESTRATOR_RELAY_WAIT_MS`: how long one ask relayed to the person waits for an answer (default 60
   * s).
   */
  relayWaitMs?: number
  /** `OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES`: the largest brief a delegation accepts. */
  maxBriefBytes: number
  /**
   * `OPENCODE_MCP_ORCHESTRATOR_LABEL`: the lane this server's sessions are titled with, unless a call passes `label`.
   */
  label?: string
  /**
   * `OPENCODE_MCP_ORCHESTRATOR_MODE`: the delegation mode for every workspace this server serves (src/policy/mode.ts).
   */
  mode?: Mode
  sandbox: SandboxFlags
  /** The raw snapshot, only to pass on whole to a child process (the OpenCode server); never read by name. */
  env: Env
}

/** A brief is a self-contained task, not a file dump: 64 KiB holds a long spec with its excerpts. */
const MAX_BRIEF_BYTES = 65_536

// One rule for every variable: empty is unset (see parseInteger for why).
const nonEmpty = (env: Env, name: string) => env[name] || undefined
const absolute = (env: Env, name: string) => (env[name]?.startsWith("/") ? env[name] : undefined)

function readLimits(env: Env): SandboxLimits {
  const limits = {} as SandboxLimits
  for (const key of Object.keys(LIMIT_SPECS) as (keyof SandboxLimits)[]) {
    const spec = LIMIT_SPECS[key]
    limits[key] = parseInteger(spec.variable, env[spec.variable], spec) ?? spec.fallback
  }
  return limits
}

/** Unset or empty is undefined (as for integers); anything else must be one of `values`. */
function oneOf<T extends string>(name: string, raw: string | undefined, values: readonly T[]): T | undefined {
  if (raw === undefined) return undefined
  if (!(values as readonly string[]).includes(raw))
    throw fail(
      "Usage",
      `${name}=${JSON.stringify(raw.slice(0, 80))} is not one of ${values.join(", ")}.`,
      `Set ${name} to one of ${values.join(", ")}, or unset it.`,
    )
  return raw as T
}

export function readFlags(env: Env): Flags {
  // HOME when set, else the account's home from the password database (what os.homedir() falls back
  // to). The sandbox once guessed "/root": right only for root, and for anyone else it left the real
  // home unprotected as a workspace root.
  const home = nonEmpty(env, "HOME") ?? homedir()
  const integer = (name: string, min: number, max: number) => parseInteger(name, env[name], { min, max })
  return {
    home,
    xdgConfigHome: absolute(env, "XDG_CONFIG_HOME") ?? `${home}/.config`,
    xdgDataHome: absolute(env, "XDG_DATA_HOME") ?? `${home}/.local/share`,
    xdgStateHome: absolute(env, "XDG_STATE_HOME") ?? `${home}/.local/state`,
    xdgCacheHome: absolute(env, "XDG_CACHE_HOME") ?? `${home}/.cache`,
    path: nonEmpty(env, "PATH"),
    tmpDir: absolute(env, "TMPDIR") ?? "/tmp",
    codexHome: absolute(env, "CODEX_HOME") ?? `${home}/.codex`,
    claudeConfigDir: absolute(env, "CLAUDE_CONFIG_DIR"),
    opencodeBin: nonEmpty(env, "OPENCODE_MCP_ORCHESTRATOR_OPENCODE") ?? "opencode",
    preserveSessions: env.OPENCODE_MCP_ORCHESTRATOR_PRESERVE_SESSIONS === "1",
    bridgeTimeoutMs: integer("OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS", 1000, 3_600_000),
    syncBudgetMs: integer("OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS", 1000, 3_600_000),
    relayWaitMs: integer("OPENCODE_MCP_ORCHESTRATOR_RELAY_WAIT_MS", 1000, 3_600_000),
    maxBriefBytes:
      parseInteger("OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES", env.OPENCODE_MCP_ORCHESTRATOR_MAX_BRIEF_BYTES, {
        min: 1024,
        max: 1_048_576,
        fallback: MAX_BRIEF_BYTES,
      }) ?? MAX_BRIEF_BYTES,
    sandbox: { limits: readLimits(env), toolchainDirs: nonEmpty(env, "OPENCODE_SANDBOX_TOOLCHAIN_DIRS") },
    label: nonEmpty(env, "OPENCODE_MCP_ORCHESTRATOR_LABEL"),
    mode: oneOf("OPENCODE_MCP_ORCHESTRATOR_MODE", nonEmpty(env, "OPENCODE_MCP_ORCHESTRATOR_MODE"), MODES),
    env,
  }
}

/** The program's own environment: the one call to make at an entry point (src/cli). */
export const flagsFromProcess = () => readFlags(process.env)

/** The PATH a child started with `env` searches (the OpenCode server, an isolated home): "" when unset. */
export const searchPath = (env: Env) => env.PATH ?? ""

/**
 * Whether text for a person may carry ANSI colour: only on a terminal, and never with `NO_COLOR` set
 * to anything (no-color.org) or `TERM=dumb`. Read apart from readFlags: `--help` must work even when
 * another variable is invalid.
 */
export const colorAllowed = (env: Env, isTTY: boolean) => isTTY && !env.NO_COLOR && env.TERM !== "dumb"

/** colorAllowed for this process's standard output. */
export const colorFromProcess = () => colorAllowed(process.env, process.stdout.isTTY === true)
