// Modes: how much of the delegation surface a workspace allows. `blueprint` (the default) and
// `insensitive` allow every role; `sensitive` allows only work that cannot change anything: scouts,
// read-only runners without the host network, and workers whose change is mechanical (spelled out in
// the brief, no judgement left to the agent).
//
// A mode can be stated in four places, read in this order: the call's `mode` argument, the
// OPENCODE_MCP_ORCHESTRATOR_MODE variable, a marker file in the project root, config.json
// `policy.mode`. The first stated one applies, except that `sensitive` stated anywhere wins: the
// person who marked a repository sensitive must not be overruled by a parent's argument or a
// machine-wide default. Pure: the collected statements in, the mode and the reason out.
import type { Refusal } from "./refusal"

export const MODES = ["blueprint", "sensitive", "insensitive"] as const
export type Mode = (typeof MODES)[number]

export const MODE_SOURCES = ["argument", "environment", "marker", "config"] as const
export type ModeSourceKind = (typeof MODE_SOURCES)[number]

export interface ModeStatement {
  source: ModeSourceKind
  mode: Mode
  /** Where exactly: the marker's path, the variable's name, the config file. */
  where: string
}

export interface ResolvedMode {
  mode: Mode
  /** The statement that decided it; absent when nothing was stated (the default). */
  decidedBy?: ModeStatement
  /** Every statement, in the order they are read. */
  statements: ModeStatement[]
  /** Statements that disagreed with the outcome and lost. */
  overruled: ModeStatement[]
}

export const MARKER_NAMES: Record<Exclude<Mode, "blueprint">, string[]> = {
  sensitive: [".opencode-mcp-orchestrator/sensitive", ".claude/sensitive"],
  insensitive: [".opencode-mcp-orchestrator/insensitive", ".claude/insensitive"],
}

const rank = (source: ModeSourceKind) => MODE_SOURCES.indexOf(source)

export function resolveMode(statements: ModeStatement[]): ResolvedMode {
  const ordered = [...statements].sort((a, b) => rank(a.source) - rank(b.source))
  const decidedBy = ordered.find((s) => s.mode === "sensitive") ?? ordered[0]
  const mode = decidedBy?.mode ?? "blueprint"
  return { mode, decidedBy, statements: ordered, overruled: ordered.filter((s) => s.mode !== mode) }
}

/** What a call asks for, as far as the mode cares. */
export type Delegation =
  | { role: "scout" }
  | { role: "worker"; mechanical: boolean }
  | { role: "runner"; workspaceAccess: "read_only" | "writable"; networkAccess: "disabled" | "host" }

export function checkMode(resolved: ResolvedMode, delegation: Delegation): Refusal | undefined {
  if (resolved.mode !== "sensitive") return undefined
  const reason = `the workspace is in sensitive mode (${describeSource(resolved.decidedBy)})`
  if (delegation.role === "worker" && !delegation.mechanical)
    return {
      rule: "sensitive mode",
      message: `A worker is refused: ${reason}, where only scouts, read-only runners and mechanical workers run.`,
      next:
        "Make the change yourself, or, if it is purely mechanical (a rename, a format, an edit the brief " +
        "spells out exactly), call worker again with mechanical: true.",
    }
  if (
    delegation.role === "runner" &&
    (delegation.workspaceAccess !== "read_only" || delegation.networkAccess !== "disabled")
  )
    return {
      rule: "sensitive mode",
      message:
        `A runner with ` +
        `${delegation.workspaceAccess === "read_only" ? "the host network" : "a writable workspace"} is refused: ` +
        `${reason}, where a runner may read the workspace but change nothing and reach no network.`,
      next: 'Call runner with workspace_access "read_only" and network_access "disabled", or run the command yourself.',
    }
  return undefined
}

/**
 * A role the person defined, against config.json's list for the mode (policy.roles): a mode with no list allows
 * every role, and the role still meets its tool's rule (a write role in sensitive mode needs mechanical: true).
 */
export function checkRoleAllowed(
  resolved: ResolvedMode,
  allowed: readonly string[] | undefined,
  role: string | undefined,
): Refusal | undefined {
  if (role === undefined || allowed === undefined || allowed.includes(role)) return undefined
  return {
    rule: `roles in ${resolved.mode} mode`,
    message:
      `The role "${role}" is not among the roles ${resolved.mode} mode allows ` +
      `(${allowed.length ? allowed.join(", ") : "none"}; policy.roles.${resolved.mode} in config.json); the mode ` +
      `comes from ${describeSource(resolved.decidedBy)}.`,
    next: allowed.length
      ? `Call with one of ${allowed.join(", ")}, or without role.`
      : "Call without role, or do the work yourself.",
  }
}

/** How much each mode holds back: a call under a lower one than its task's previous call runs weaker. */
const STRENGTH: Record<Mode, number> = { insensitive: 0, blueprint: 1, sensitive: 2 }

/** What one call of a task ran under, as the task records it. */
export interface CallMode {
  mode: Mode
  source: string
}

/**
 * The warning a call gets when its task's previous call ran under a stronger mode: a marker removed
 * (perhaps by the task's own agent), a changed config or environment. Undefined when it did not weaken.
 */
export function weakenedMode(previous: CallMode | undefined, now: CallMode): string | undefined {
  if (!previous || STRENGTH[now.mode] >= STRENGTH[previous.mode]) return undefined
  const was = `it was ${previous.mode} (${previous.source}), now ${now.mode} (${now.source})`
  const check = "check the marker files (the policy tool lists them) and restore them"
  return (
    `The workspace's mode weakened since this task's previous call: ${was}, so this call ran under ` +
    `${now.mode}'s rules. If you did not change that, a delegated agent may have: ${check}.`
  )
}

/** One line a parent reads: where the mode came from. */
export function describeSource(statement: ModeStatement | undefined): string {
  if (!statement) return "the default: nothing states a mode"
  if (statement.source === "argument") return "the call's mode argument"
  if (statement.source === "environment") return `${statement.where} in the server's environment`
  if (statement.source === "marker") return `marker file ${statement.where}`
  return `policy.mode in ${statement.where}`
}

/** What each role may do under a mode, for the policy tool. */
export function allowances(mode: Mode): Record<"scout" | "worker" | "runner", string> {
  if (mode !== "sensitive")
    return { scout: "allowed", worker: "allowed", runner: "allowed (any workspace_access and network_access)" }
  return {
    scout: "allowed",
    worker: "only with mechanical: true (a change the brief spells out exactly)",
    runner: 'only workspace_access "read_only" with network_access "disabled"',
  }
}
