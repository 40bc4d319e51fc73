// Where sandbox_shell learns a worker's scope: the session itself. The engine creates a scoped worker's
// session with edit rules and one rule per scope entry under SCOPE_RULE (src/opencode/session.ts), and
// the plugin reads them back through OpenCode's own client on every call; no state file to swap or spoil.
// A session that is scoped but whose scope cannot be read (the read failed, the rules are not ours)
// fails closed: the whole workspace stays read-only for that command, and the model is told.
import { AppError } from "../src/errors"
import { checkScope, SCOPE_RULE } from "../src/workspace/scope"
import type { SessionClient } from "./types"

export type SessionScope =
  | { kind: "open" }
  | { kind: "scoped"; scope: string[] }
  /** Unknown whether or how far it is scoped: nothing is bound writable. */
  | { kind: "unknown"; why: string }

interface Rule {
  permission: string
  pattern: string
  action?: unknown
}

const isRule = (value: unknown): value is Rule =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Rule).permission === "string" &&
  typeof (value as Rule).pattern === "string"

/** The scope a session's permission rules carry (OpenCode's Session.Info `permission`). Pure. */
export function scopeOfRules(rules: unknown): SessionScope {
  if (rules === undefined || rules === null) return { kind: "open" }
  if (!Array.isArray(rules) || !rules.every(isRule)) return { kind: "unknown", why: "its rules are not a rule list" }
  const entries = rules.filter((rule) => rule.permission === SCOPE_RULE).map((rule) => rule.pattern)
  const limited = rules.some((rule) => rule.permission === "edit" && rule.pattern === "*" && rule.action === "deny")
  if (!entries.length)
    return limited ? { kind: "unknown", why: "its edit rules limit it but name no scope" } : { kind: "open" }
  try {
    return { kind: "scoped", scope: checkScope(entries) ?? [] }
  } catch (error) {
    if (error instanceof AppError) return { kind: "unknown", why: `its scope is not valid: ${error.message}` }
    throw error
  }
}

/** The calling session's scope, read from OpenCode; unknown when it cannot be read. */
export async function sessionScope(
  client: SessionClient | undefined,
  sessionID: string,
  directory: string,
): Promise<SessionScope> {
  if (!client) return { kind: "unknown", why: "this OpenCode gives the plugin no client to read the session" }
  // A failed read is an answer (unknown, so nothing is bound writable), not an error for the tool.
  const read = await client.session.get({ path: { id: sessionID }, query: { directory } }).then(
    (result) => result,
    (error: unknown) => ({ error, data: undefined }),
  )
  const data = read.data as { id?: unknown; permission?: unknown } | undefined
  if (read.error !== undefined || !data || data.id !== sessionID)
    return { kind: "unknown", why: "the session could not be read" }
  return scopeOfRules(data.permission)
}
