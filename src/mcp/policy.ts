// The delegation policy at the door of scout, worker and runner: the secret guard, the tier and the
// workspace's mode, checked before the task lifecycle sees the call, so a refusal leaves no task
// record, lock or OpenCode session behind (and a refused brief is never stored). The rules are pure
// (src/policy); this file gathers what they decide on: config.json, the flags, marker files.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { realpath, stat } from "node:fs/promises"
import { dirname, isAbsolute, join } from "node:path"
import type { Runtime } from "../engine/runtime"
import { fail } from "../errors"
import { checkMode, MARKER_NAMES, resolveMode, type Delegation, type Mode, type ModeStatement, type ResolvedMode } from "../policy/mode"
import type { Refusal } from "../policy/refusal"
import { findSecrets } from "../policy/secrets"
import { checkTier, type Tier } from "../policy/tiers"
import { errorResult } from "./shared"

export interface PolicyRequest {
  cwd: string
  mode?: Mode
  tier?: Tier
  delegation: Delegation
  /** The text the agent would receive, by argument name (task; command, objective, expected). */
  texts: Record<string, string | undefined>
}

export interface WorkspacePolicy {
  /** The directory whose markers count: the nearest ancestor of cwd with a .git, else cwd. */
  projectRoot: string
  resolved: ResolvedMode
  requireTier: boolean
}

/** The first rule that refuses the call, or undefined when it may start. */
export async function checkPolicy(runtime: Runtime, request: PolicyRequest): Promise<Refusal | undefined> {
  // The secret guard needs no IO and goes first: a brief with a secret is refused whatever else holds.
  const secrets = secretRefusal(request.texts)
  if (secrets) return secrets
  const policy = await workspacePolicy(runtime, request.cwd, request.mode)
  return checkTier(request.tier, policy.requireTier) ?? checkMode(policy.resolved, request.delegation)
}

const MAX_LISTED = 10

export function secretRefusal(texts: Record<string, string | undefined>): Refusal | undefined {
  const found = Object.entries(texts).flatMap(([argument, text]) => (text ? findSecrets(text).map((f) => `${f.kind} at ${argument} ${f.line}:${f.column}`) : []))
  if (!found.length) return undefined
  // A brief of repeated tokens would otherwise make the refusal as long as the brief.
  const listed = found.length > MAX_LISTED ? [...found.slice(0, MAX_LISTED), `and ${found.length - MAX_LISTED} more`] : found
  return {
    rule: "secret guard",
    message: `The call looks like it carries a secret: ${listed.join("; ")}. Nothing was started and the text was not stored or sent.`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ${TOKEN} is shown to the parent as a placeholder to write
    next: "Remove the secret and call again, referring to credentials by name (an environment variable, a file path), never by value; if it is a placeholder, write it as one (<token>, ${TOKEN}).",
  }
}

export async function workspacePolicy(runtime: Runtime, cwd: string, argument?: Mode): Promise<WorkspacePolicy> {
  const config = await runtime.config()
  const projectRoot = await findProjectRoot(cwd)
  const statements: ModeStatement[] = []
  if (argument) statements.push({ source: "argument", mode: argument, where: "mode" })
  if (runtime.flags.mode) statements.push({ source: "environment", mode: runtime.flags.mode, where: "OPENCODE_MCP_ORCHESTRATOR_MODE" })
  statements.push(...(await markerStatements(projectRoot)))
  if (config.policy.mode) statements.push({ source: "config", mode: config.policy.mode, where: runtime.paths.configFile })
  return { projectRoot, resolved: resolveMode(statements), requireTier: config.policy.requireTier }
}

/** The nearest ancestor (or cwd itself) holding a .git file or directory; cwd when there is none. */
async function findProjectRoot(cwd: string): Promise<string> {
  if (!isAbsolute(cwd)) return cwd
  const start = await realpath(cwd).catch(() => cwd)
  for (let dir = start; ; dir = dirname(dir)) {
    if (await exists(join(dir, ".git"))) return dir
    if (dir === dirname(dir)) return start
  }
}

async function markerStatements(root: string): Promise<ModeStatement[]> {
  if (!isAbsolute(root)) return []
  const statements: ModeStatement[] = []
  for (const mode of ["sensitive", "insensitive"] as const)
    for (const name of MARKER_NAMES[mode]) if (await exists(join(root, name))) statements.push({ source: "marker", mode, where: join(root, name) })
  return statements
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  )

/** The isError result a refused call returns, or undefined when it may start. */
export async function policyGate(runtime: Runtime, request: PolicyRequest): Promise<CallToolResult | undefined> {
  try {
    const refusal = await checkPolicy(runtime, request)
    return refusal && refusalResult(refusal)
  } catch (error) {
    // An unreadable config.json: the same result the lifecycle would give, still before any task.
    return errorResult(error)
  }
}

export function refusalResult(refusal: Refusal): CallToolResult {
  return errorResult(fail("Usage", `Refused by policy (${refusal.rule}): ${refusal.message}`, refusal.next, { rule: refusal.rule }))
}
