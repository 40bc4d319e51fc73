// One delegated OpenCode session: create it in the workspace with the role's agent and model,
// prompt it asynchronously, follow it to idle through the event hub (what it did is read back by
// transcript.ts).
import type { AssistantMessage, GlobalSession, OpencodeClient } from "@opencode-ai/sdk/v2"
import { fail } from "../errors"
import { SCOPE_RULE, scopeWildcards } from "../workspace/scope"
import type { Event, EventHub } from "./client"

/**
 * For the calls below, a failure to reach OpenCode (or a session already gone) means "unknown": each
 * caller turns that undefined into a decision (poll again, confirm removal by a second look, report
 * the session as missing), so the error itself carries nothing more.
 */
const unknown = () => undefined

export interface ModelRoute {
  providerID: string
  modelID: string
  variant?: string
}

export const parseModel = (id: string): ModelRoute => {
  const slash = id.indexOf("/")
  return { providerID: id.slice(0, slash), modelID: id.slice(slash + 1) }
}

export const formatModel = (route: ModelRoute) =>
  `${route.providerID}/${route.modelID}${route.variant ? `#${route.variant}` : ""}`

export function unwrap<T>(result: { data?: T; error?: unknown; response?: Response }, what: string): T {
  if (result.error !== undefined || result.data === undefined) {
    const detail =
      typeof result.error === "object" && result.error
        ? JSON.stringify(result.error).slice(0, 300)
        : String(result.error ?? result.response?.status)
    throw fail("Server", `OpenCode refused to ${what}: ${detail}`)
  }
  return result.data
}

/**
 * `scope`: the paths the session may change (src/workspace/scope.ts); every other path's edit is denied by
 * the session's own rules, which the plugin's file tools ask before writing (plugin/files/access.ts), and
 * the plugin's sandbox_shell binds only these paths writable (it reads them back from the session).
 */
export async function createSession(
  client: OpencodeClient,
  directory: string,
  title: string,
  scope?: readonly string[],
): Promise<string> {
  const permission = scope && scopeRules(scope)
  const session = unwrap(await client.session.create({ directory, title, permission }), "create a session")
  return session.id
}

// The deny first: the last matching rule wins, and a tool whose last rule is a whole deny is hidden.
const scopeRules = (scope: readonly string[]) => [
  { permission: "edit", pattern: "*", action: "deny" as const },
  ...scopeWildcards(scope).map((pattern) => ({ permission: "edit", pattern, action: "allow" as const })),
  ...scope.map((pattern) => ({ permission: SCOPE_RULE, pattern, action: "allow" as const })),
]

/** A session continued (a fork does not inherit its parent's rules): the same rules as createSession's. */
export async function restrictEdits(
  client: OpencodeClient,
  sessionID: string,
  directory: string,
  scope: readonly string[],
): Promise<void> {
  unwrap(
    await client.session.update({ sessionID, directory, permission: scopeRules(scope) }),
    "limit the session's edits",
  )
}

export interface PromptSpec {
  directory: string
  agent: string
  text: string
  model?: ModelRoute
  /** Added to the agent's own system prompt for this message: a user role's prompt (engine/admission/roles.ts). */
  system?: string
}

export async function sendPrompt(client: OpencodeClient, sessionID: string, spec: PromptSpec): Promise<void> {
  const result = await client.session.promptAsync({
    sessionID,
    directory: spec.directory,
    agent: spec.agent,
    model: spec.model ? { providerID: spec.model.providerID, modelID: spec.model.modelID } : undefined,
    variant: spec.model?.variant,
    system: spec.system,
    parts: [{ type: "text", text: spec.text }],
  })
  if (result.error !== undefined) unwrap(result, "accept the prompt")
}

export type WaitOutcome =
  | { kind: "idle" }
  | { kind: "error"; message: string; error?: SessionError }
  | { kind: "aborted" }
  | { kind: "deadline" }
  | { kind: "lost" }

/** OpenCode's error object, as an assistant message or a session.error event carries it. */
export type SessionError = NonNullable<AssistantMessage["error"]>

export interface WaitOptions {
  signal?: AbortSignal
  deadline?: number
  onEvent?: (event: Event) => void
  /** How often to confirm the state by polling, in case an event was missed. */
  pollMs?: number
  /** Asked at each poll: true once the server is gone (its process no longer runs), which ends the wait at once. */
  serverGone?: () => Promise<boolean>
}

/** Resolves when the session goes idle after its prompt, errors, or the signal/deadline ends the wait. */
export function waitIdle(
  client: OpencodeClient,
  hub: EventHub,
  sessionID: string,
  directory: string,
  options: WaitOptions = {},
): Promise<WaitOutcome> {
  return new Promise((resolve) => {
    let error: string | undefined
    let raw: SessionError | undefined
    let settled = false
    // Declared before anything can call finish(): an abort that already happened finishes at once.
    let timer: ReturnType<typeof setTimeout> | undefined
    let poll: ReturnType<typeof setInterval> | undefined
    const finish = (outcome: WaitOutcome) => {
      if (settled) return
      settled = true
      off()
      if (poll) clearInterval(poll)
      if (timer) clearTimeout(timer)
      options.signal?.removeEventListener("abort", onAbort)
      resolve(outcome)
    }
    const off = hub.on(sessionID, (event) => {
      options.onEvent?.(event)
      if (event.type === "session.error") {
        raw = event.properties.error
        error = describeError(raw)
      }
      if (event.type === "session.idle")
        finish(error ? { kind: "error", message: error, error: raw } : { kind: "idle" })
    })
    const onAbort = () => finish({ kind: "aborted" })
    if (options.signal?.aborted) return onAbort()
    options.signal?.addEventListener("abort", onAbort, { once: true })
    timer = options.deadline
      ? setTimeout(() => finish({ kind: "deadline" }), Math.max(0, options.deadline - Date.now()))
      : undefined
    poll = setInterval(async () => {
      // A liveness check that fails proves nothing: keep polling, the session's own state decides.
      if (await options.serverGone?.().catch(() => false)) return finish({ kind: "lost" })
      if (await finishedByPoll(client, sessionID, directory))
        finish(error ? { kind: "error", message: error, error: raw } : { kind: "idle" })
    }, options.pollMs ?? 3000)
  })
}

async function finishedByPoll(client: OpencodeClient, sessionID: string, directory: string) {
  if (await working(client, sessionID, directory)) return false
  const last = await latestMessage(client, sessionID, directory)
  return last?.role === "assistant" && Boolean(last.time.completed) && last.finish !== "tool-calls"
}

export function describeError(error: AssistantMessage["error"] | undefined): string {
  if (!error) return "unknown error"
  const data = error.data as { message?: string; statusCode?: number } | undefined
  const status = data?.statusCode ? ` (HTTP ${data.statusCode})` : ""
  return `${error.name}${status}: ${data?.message ?? "no message"}`
}

export async function abortSession(client: OpencodeClient, sessionID: string, directory: string) {
  await client.session.abort({ sessionID, directory }).catch(unknown)
}

/** A never-run copy of the session's conversation (to continue it later once the original is removed). */
export async function forkSession(
  client: OpencodeClient,
  sessionID: string,
  directory: string,
): Promise<string | undefined> {
  const result = await client.session.fork({ sessionID, directory }).catch(unknown)
  return result?.data?.id
}

export type SessionState = "busy" | "idle" | "missing"

/** Whether the session exists and is working (busy or retrying) or idle. */
export async function sessionState(
  client: OpencodeClient,
  sessionID: string,
  directory: string,
): Promise<SessionState> {
  const found = await client.session.get({ sessionID, directory }).catch(unknown)
  if (!found?.data) return "missing"
  return (await working(client, sessionID, directory)) ? "busy" : "idle"
}

/** True while OpenCode lists the session as busy or retrying (an idle session is not listed, or listed idle). */
async function working(client: OpencodeClient, sessionID: string, directory: string): Promise<boolean> {
  const status = await client.session.status({ directory }).catch(unknown)
  const state = (status?.data as Record<string, { type: string }> | undefined)?.[sessionID]
  return state !== undefined && state.type !== "idle"
}

/** Waits (briefly) until an aborted session stops working, so what it wrote has landed. */
export async function settleAfterAbort(client: OpencodeClient, sessionID: string, directory: string, timeoutMs = 2000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && (await sessionState(client, sessionID, directory)) === "busy") await Bun.sleep(100)
}

/** Sessions in the directory whose title contains `marker` (a task id), newest first. */
export async function findSessions(client: OpencodeClient, directory: string, marker: string): Promise<string[]> {
  const result = await client.session.list({ directory, search: marker }).catch(unknown)
  return (result?.data ?? []).filter((session) => session.title.includes(marker)).map((session) => session.id)
}

/** True once the session is confirmed gone. */
export async function removeSession(client: OpencodeClient, sessionID: string, directory: string): Promise<boolean> {
  const result = await client.session.delete({ sessionID, directory }).catch(unknown)
  if (result?.data === true) return true
  const check = await client.session.get({ sessionID, directory }).catch(unknown)
  return check?.response?.status === 404
}

/**
 * The session's newest message. Without a directory OpenCode reads it without booting an instance for
 * the session's directory (the sessions listing, across directories).
 */
export async function latestMessage(client: OpencodeClient, sessionID: string, directory?: string) {
  return (await client.session.messages({ sessionID, directory, limit: 1 }).catch(unknown))?.data?.at(-1)?.info
}

/** The session's newest `count` messages with their parts, oldest first; undefined when the session is gone. */
export async function recentMessages(client: OpencodeClient, sessionID: string, count: number) {
  return (await client.session.messages({ sessionID, limit: count }).catch(unknown))?.data
}

/** The id of the newest message, to read only what a later prompt adds. */

export const lastMessageID = async (client: OpencodeClient, sessionID: string, directory: string) =>
  (await latestMessage(client, sessionID, directory))?.id

/** "user" when the session's newest message is a brief nobody has answered yet. */
export const lastMessageRole = async (client: OpencodeClient, sessionID: string, directory: string) =>
  (await latestMessage(client, sessionID, directory))?.role

/** Every message of a session with its parts; undefined when the session is gone. */
export async function readMessages(client: OpencodeClient, sessionID: string, directory: string) {
  return (await client.session.messages({ sessionID, directory }).catch(unknown))?.data
}

/** The directory a session was started in, asked of OpenCode; undefined when it does not know the session. */
export async function sessionDirectory(client: OpencodeClient, sessionID: string): Promise<string | undefined> {
  return (await client.session.get({ sessionID }).catch(unknown))?.data?.directory
}

/** Sessions per page of OpenCode's list (one request each): a request costs OpenCode about its whole list. */
const SESSION_PAGE = 5000

/**
 * Every session the shared server keeps, across directories, latest update first (OpenCode's experimental
 * global list: asking per directory would boot an instance, and load its project plugins, for each), read
 * page by page. A page holds the sessions updated strictly before its `cursor` (the previous page's oldest
 * `time.updated`): sessions sharing that millisecond would fall between two pages, so the next page is
 * asked from the millisecond itself and ids already seen are dropped; a full page of one millisecond is
 * asked again twice as large.
 */
export async function listAllSessions(client: OpencodeClient, pageSize = SESSION_PAGE) {
  const seen = new Map<string, GlobalSession>()
  let cursor: number | undefined
  let limit = pageSize
  for (;;) {
    const page = unwrap(
      await client.experimental.session.list({ limit, ...(cursor !== undefined && { cursor }) }),
      "list the sessions",
    )
    let fresh = 0
    for (const session of page)
      if (!seen.has(session.id)) {
        seen.set(session.id, session)
        fresh++
      }
    if (page.length < limit) break
    if (fresh === 0) {
      limit *= 2
      continue
    }
    cursor = Math.min(...page.map((session) => session.time.updated)) + 1
    limit = pageSize
  }
  return [...seen.values()]
}
