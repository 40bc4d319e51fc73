// The delegation policy at the door of every call that runs an agent (scout, worker, runner, each
// delegate_parallel member, every task_continue): the secret guard, the tier and the workspace's
// mode, checked by the lifecycle before any task record, lock or OpenCode session exists (and a
// refused brief is never stored). The rules are pure (src/policy); this file gathers what they
// decide on: config.json, the flags, marker files.
import { lstat, realpath } from "node:fs/promises"
import { isAbsolute, resolve } from "node:path"
import { fail, type AppError } from "../../errors"
import { markerCandidates, markerDirectories } from "../../policy/markers"
import {
  allowances,
  checkMode,
  checkRoleAllowed,
  MARKER_NAMES,
  describeSource,
  resolveMode,
  type Delegation,
  type Mode,
  type ModeStatement,
  type ResolvedMode,
} from "../../policy/mode"
import type { Refusal } from "../../policy/refusal"
import { findSecrets, MIN_ENTROPY, MIN_SECRET_LENGTH } from "../../policy/secrets"
import { checkTier, DELEGABLE_TIERS, TIERS, type Tier } from "../../policy/tiers"
import { PROFILE_TOOL } from "../../config/role-names"
import { forget, recall, remember, type ModeMemory } from "./mode-memory"
import { rolesAt } from "./roles"
import type { Runtime } from "../capacity"
import type { MissingMarker, PolicyDecision } from "../records"

/** What a call states for the policy, besides where it runs. */
export interface CallPolicy {
  mode?: Mode
  tier?: Tier
  delegation: Delegation
  /** A role the person defined, by name: config.json's policy.roles may leave it out of the mode. */
  userRole?: string
  /** The text the agent would receive, by argument name (task; command, objective, expected). */
  texts: Record<string, string | undefined>
}

export interface PolicyRequest extends CallPolicy {
  cwd: string
}

export interface WorkspacePolicy {
  /** The outermost ancestor of cwd below HOME with a .git, else cwd (markers count from cwd up to below HOME). */
  projectRoot: string
  resolved: ResolvedMode
  requireTier: boolean
  missingMarkers: MissingMarker[]
}

const MAX_LISTED = 10

function secretRefusal(texts: Record<string, string | undefined>): Refusal | undefined {
  const found = Object.entries(texts).flatMap(([argument, text]) =>
    text ? findSecrets(text).map((f) => `${f.kind} at ${argument} ${f.line}:${f.column}`) : [],
  )
  if (!found.length) return undefined
  // A brief of repeated tokens would otherwise make the refusal as long as the brief.
  const listed =
    found.length > MAX_LISTED ? [...found.slice(0, MAX_LISTED), `and ${found.length - MAX_LISTED} more`] : found
  return {
    rule: "secret guard",
    message:
      `The call looks like it carries a secret: ${listed.join("; ")}. Nothing was started and the text was ` +
      "not stored or sent.",
    next:
      "Remove the secret and call again, referring to credentials by name (an environment variable, a file " +
      // biome-ignore lint/suspicious/noTemplateCurlyInString: ${TOKEN} is a placeholder the parent is shown
      "path), never by value; if it is a placeholder, write it as one (<token>, ${TOKEN}).",
  }
}

/** What a policy look-up states besides cwd: the call's mode, and whether gone markers are released. */
export interface PolicyOptions {
  mode?: Mode
  /** Forget remembered sensitive markers that are gone (the parent's or the person's word), so the mode goes down. */
  release?: boolean
}

async function workspacePolicy(runtime: Runtime, cwd: string, options: PolicyOptions = {}): Promise<WorkspacePolicy> {
  const { mode: argument, release = false } = options
  const config = await runtime.config()
  const markers = await markerStatements(cwd, runtime.flags.home)
  const held = await heldMarkers(runtime.paths.modesDir, markers, release)
  const statements: ModeStatement[] = []
  if (argument) statements.push({ source: "argument", mode: argument, where: "mode" })
  if (runtime.flags.mode)
    statements.push({ source: "environment", mode: runtime.flags.mode, where: "OPENCODE_MCP_ORCHESTRATOR_MODE" })
  statements.push(...markers.statements, ...held.statements)
  if (config.policy.mode)
    statements.push({ source: "config", mode: config.policy.mode, where: runtime.paths.configFile })
  return {
    projectRoot: markers.root,
    resolved: resolveMode(statements),
    requireTier: config.policy.requireTier,
    missingMarkers: held.missing,
  }
}

interface FoundMarkers {
  root: string
  statements: ModeStatement[]
  /** Every directory whose memory counts: the canonical walk, and the walk of cwd as given (a swapped link). */
  dirs: string[]
}

/**
 * What the product remembers of the walk's directories (mode-memory.ts): each sensitive marker found
 * is remembered; one remembered and gone still states sensitive, and is named as missing; a memory
 * that cannot be read holds its directory sensitive. `release` (the parent's or the person's word)
 * forgets what is gone instead, so the mode goes down.
 */
async function heldMarkers(
  modesDir: string,
  found: FoundMarkers,
  release: boolean,
): Promise<{ statements: ModeStatement[]; missing: MissingMarker[] }> {
  const statements: ModeStatement[] = []
  const missing: MissingMarker[] = []
  const now = new Date().toISOString()
  for (const dir of found.dirs) {
    const seen = MARKER_NAMES.sensitive
      .map((name) => `${dir}/${name}`)
      .filter((path) => found.statements.some((s) => s.mode === "sensitive" && s.where === path))
    const { memory, setAside } = await recall(modesDir, dir)
    const remembered = memory?.markers ?? []
    const gone: string[] = []
    for (const path of remembered) if (!(await present(path))) gone.push(path)
    const unreadable = setAside ? `${setAside.reason} (moved to ${setAside.movedTo})` : memory?.unreadable
    if (release && (gone.length || unreadable)) {
      await forget(modesDir, dir)
      if (seen.length) await remember(modesDir, { version: 1, directory: dir, markers: seen, since: now })
      continue
    }
    if (unreadable) {
      missing.push({ path: dir, why: `its remembered markers could not be read: ${unreadable}` })
      statements.push({
        source: "marker",
        mode: "sensitive",
        where: `${dir} (held: its remembered markers could not be read)`,
      })
    }
    for (const path of gone) missing.push({ path, why: `remembered since ${memory?.since ?? now}` })
    if (gone.length && !seen.length && !unreadable)
      statements.push({ source: "marker", mode: "sensitive", where: `${gone[0]} (missing; remembered until released)` })
    const markers = [...new Set([...remembered, ...seen])].sort()
    const changed = markers.length !== remembered.length || (setAside !== undefined && !memory)
    if (changed) {
      const next: ModeMemory = { version: 1, directory: dir, markers, since: memory?.since ?? now }
      if (unreadable) next.unreadable = unreadable
      await remember(modesDir, next)
    }
  }
  return { statements, missing }
}

/**
 * The repository's outermost root for the policy tool to show: the highest directory the marker search
 * covers that holds a `.git`, else cwd. Only shown: markers are read from every directory searched.
 */
function projectRootOf(searched: string[], cwd: string, present: Set<string>): string {
  return searched.findLast((dir) => present.has(`${dir}/.git`)) ?? cwd
}

async function markerStatements(cwd: string, home: string): Promise<FoundMarkers> {
  if (!isAbsolute(cwd)) return { root: cwd, statements: [], dirs: [] }
  // A path that does not resolve is searched as given (a marker there is found or not on its own).
  const start = await realpath(cwd).catch(() => cwd)
  const canonicalHome = await realpath(home).catch(() => home)
  const searched = markerDirectories(start, canonicalHome)
  const candidates = markerCandidates(start, canonicalHome)
  const paths = [...candidates.map((c) => c.path), ...searched.map((dir) => `${dir}/.git`)]
  const found = await Promise.all(paths.map(async (path) => ((await present(path)) ? path : undefined)))
  const hits = new Set(found.filter((path): path is string => path !== undefined))
  const statements = candidates
    .filter((c) => hits.has(c.path))
    .map((c): ModeStatement => ({ source: "marker", mode: c.mode, where: c.path }))
  // The walk of cwd as given too: a directory swapped for a link keeps the memory of its old name.
  const given = markerDirectories(resolve(cwd), canonicalHome)
  const dirs = [...new Set([...searched, ...given])]
  return { root: projectRootOf(searched, start, hits), statements, dirs }
}

/** Any entry counts, a dangling link included: a marker's presence is the statement. */
const present = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  )

/**
 * The one gate every call that runs an agent passes (lifecycle.ts start and continue, and
 * delegate_parallel before it starts any member): the call's decision, or the refusal thrown as an
 * error naming the rule and the next step.
 */
export async function gatePolicy(runtime: Runtime, request: PolicyRequest): Promise<PolicyDecision> {
  // The secret guard needs no IO and goes first: a brief with a secret is refused whatever else holds.
  const secrets = secretRefusal(request.texts)
  if (secrets) throw refusalError(secrets)
  const policy = await workspacePolicy(runtime, request.cwd, { mode: request.mode })
  const allowList = (await runtime.config()).policy.roles?.[policy.resolved.mode]
  const refusal =
    checkTier(request.tier, policy.requireTier) ??
    checkMode(policy.resolved, request.delegation) ??
    checkRoleAllowed(policy.resolved, allowList, request.userRole)
  if (refusal) throw refusalError(refusal)
  return {
    mode: policy.resolved.mode,
    source: describeSource(policy.resolved.decidedBy),
    delegation: request.delegation,
    tier: request.tier,
    ...(policy.missingMarkers.length ? { missingMarkers: policy.missingMarkers } : {}),
  }
}

/** The warning a call gets when remembered sensitive markers are gone: named, and still obeyed. */
export function missingMarkerWarning(missing: MissingMarker[]): string {
  const named = missing
    .slice(0, 5)
    .map((marker) => `${marker.path} (${marker.why})`)
    .join(", ")
  const more = missing.length > 5 ? ` and ${missing.length - 5} more` : ""
  return (
    `Sensitive markers this product saw here are gone: ${named}${more}. The mode they stated still applies. ` +
    "If the person removed them on purpose, call the policy tool with release_missing_markers: true; if not, a " +
    "delegated agent or another program may have: restore them."
  )
}

function refusalError(refusal: Refusal): AppError {
  return fail("Usage", `Refused by policy (${refusal.rule}): ${refusal.message}`, refusal.next, { rule: refusal.rule })
}

/** What the secret guard refuses and lets pass, in the words the policy tool shows. */
const SECRET_GUARD =
  "Briefs (task; runner's command, objective, expected) are refused when they carry a private key block, a " +
  "GitHub, AWS, Slack, OpenAI, Anthropic or Google token, a JWT, or a password/secret/token/api_key assignment " +
  `whose value has at least ${MIN_SECRET_LENGTH} characters and ${MIN_ENTROPY} bits of entropy per character; ` +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is shown to the parent as a placeholder that passes
  "placeholders (<key>, ${VAR}, xxx, changeme, a lookup of an environment variable) pass. The refusal names the " +
  "kind and line:column, never the value."

/** The policy a call in `cwd` would meet, shown rather than enforced (the policy tool). */
export interface PolicyReport extends WorkspacePolicy {
  /** Where the mode came from, as describeSource words it. */
  source: string
  allowed: Record<"scout" | "worker" | "runner", string>
  tiers: { required: boolean; delegated: Tier[]; refused: Tier[] }
  secretGuard: string
  /** The roles the person defined for this workspace: which tool runs each, and whether this mode allows it. */
  roles: ListedRole[]
}

export interface ListedRole {
  name: string
  /** The tool that runs it; absent for a role that cannot run. */
  tool?: "scout" | "worker"
  description: string
  source: string
  /** "allowed", or why a call naming it here is refused. */
  allowed: string
  notes?: string[]
}

/** The same gathering the gate does (workspacePolicy), with what each role may do under its outcome. */
export async function policyReport(runtime: Runtime, cwd: string, options: PolicyOptions = {}): Promise<PolicyReport> {
  const policy = await workspacePolicy(runtime, cwd, options)
  const catalog = await rolesAt(runtime, cwd)
  const allowList = (await runtime.config()).policy.roles?.[policy.resolved.mode]
  const roles: ListedRole[] = [
    ...catalog.roles.map((role) => {
      const tool = PROFILE_TOOL[role.profile]
      const refusal =
        checkRoleAllowed(policy.resolved, allowList, role.name) ??
        (tool === "worker" ? checkMode(policy.resolved, { role: "worker", mechanical: false }) : undefined)
      const allowed = !refusal
        ? "allowed"
        : refusal.rule === "sensitive mode"
          ? "only with mechanical: true"
          : `refused: ${refusal.rule}`
      return {
        name: role.name,
        tool,
        description: role.description,
        source: role.source,
        allowed,
        ...(role.notes.length ? { notes: role.notes } : {}),
      }
    }),
    ...catalog.refused.map((role) => ({
      name: role.name,
      description: "",
      source: role.source,
      allowed: `cannot run: ${role.reason}`,
    })),
  ]
  return {
    ...policy,
    roles,
    source: describeSource(policy.resolved.decidedBy),
    allowed: allowances(policy.resolved.mode),
    tiers: {
      required: policy.requireTier,
      delegated: [...DELEGABLE_TIERS],
      refused: TIERS.filter((tier) => !DELEGABLE_TIERS.includes(tier)),
    },
    secretGuard: SECRET_GUARD,
  }
}
