// Protocol revision 2026-07-28 as Claude Code 2.1.332 speaks it, translated to and from the 2025-11-25
// revision the pinned SDK serves. Pure: messages in, messages out; the connection that sequences them is
// revision-link.ts. What the revision asks for, read from Claude Code's own client (README "Native MCP
// tasks"): `server/discover` instead of `initialize`, a `_meta` envelope on every request
// (protocolVersion, clientInfo, clientCapabilities), `resultType` on every result, a cache hint on
// lists, and the tasks extension, where the server chooses to answer a tools/call with a task and the
// client polls tasks/get, which carries the tool's result once the task completes.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { POLL_MS } from "./tasks"

const REVISION = "2026-07-28"
/** The revision the SDK behind this layer is initialized with. */
const SDK_REVISION = "2025-11-25"
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
/** Envelope keys the SDK does not know; the rest of `_meta` (progressToken, the client's own) goes on. */
const ENVELOPE_KEYS = [
  PROTOCOL_VERSION_KEY,
  CLIENT_INFO_KEY,
  CLIENT_CAPABILITIES_KEY,
  "io.modelcontextprotocol/logLevel",
]
/** Results the revision requires a cache hint on (ttlMs, cacheScope). */
const CACHED = new Set(["tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"])
/** The calls that become tasks when they outlast the sync budget: those tasks.ts runs as tasks. */
const TASK_TOOLS = new Set(["scout", "worker", "runner", "delegate_parallel", "task_continue"])

export type Json = Record<string, unknown>
export type Id = string | number

export const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A client's `server/discover`: the request that opens a 2026-07-28 connection. */
export function isDiscover(message: unknown): message is Json & { id: Id } {
  return isObject(message) && message.method === "server/discover" && isId(message.id)
}

export const isId = (id: unknown): id is Id => typeof id === "string" || typeof id === "number"

/** What the request's envelope says the client is and can do. */
function envelopeOf(message: Json): { clientInfo?: Json; capabilities?: Json } {
  const meta = isObject(message.params) && isObject(message.params._meta) ? message.params._meta : {}
  const info = meta[CLIENT_INFO_KEY]
  const capabilities = meta[CLIENT_CAPABILITIES_KEY]
  return {
    clientInfo: isObject(info) ? info : undefined,
    capabilities: isObject(capabilities) ? capabilities : undefined,
  }
}

/** True when the request's envelope declares the tasks extension. */
export function declaresTasks(message: Json): boolean {
  const extensions = envelopeOf(message).capabilities?.extensions
  return isObject(extensions) && extensions[TASKS_EXTENSION] !== undefined
}

/** The request as the SDK reads it: the envelope keys out of `_meta` (an emptied `_meta` goes too). */
export function withoutEnvelope(message: Json): Json {
  if (!isObject(message.params) || !isObject(message.params._meta)) return message
  const meta = Object.fromEntries(Object.entries(message.params._meta).filter(([key]) => !ENVELOPE_KEYS.includes(key)))
  const { _meta: _, ...params } = message.params
  return { ...message, params: Object.keys(meta).length > 0 ? { ...params, _meta: meta } : params }
}

/** The `initialize` the SDK is given for a client that discovered instead: no client capabilities it would act on. */
export function initializeFor(discover: Json, id: Id): JSONRPCMessage {
  const info = envelopeOf(discover).clientInfo
  const clientInfo = {
    name: typeof info?.name === "string" ? info.name : "unknown",
    version: typeof info?.version === "string" ? info.version : "0",
  }
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: SDK_REVISION, capabilities: {}, clientInfo },
  } as JSONRPCMessage
}

export const INITIALIZED: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/initialized" }

/** The answer to `server/discover`, from the SDK's answer to `initialize`. */
export function discoverResult(initialized: Json): Json {
  const { tasks: _, ...capabilities } = isObject(initialized.capabilities) ? initialized.capabilities : {}
  const extensions = isObject(capabilities.extensions) ? capabilities.extensions : {}
  return {
    resultType: "complete",
    ...(isObject(initialized.serverInfo) && { _meta: { [SERVER_INFO_KEY]: initialized.serverInfo } }),
    ttlMs: 0,
    cacheScope: "private",
    supportedVersions: [REVISION],
    capabilities: { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } },
    ...(typeof initialized.instructions === "string" && { instructions: initialized.instructions }),
  }
}

/** An SDK result for a client request, as the revision has it: `resultType`, and a cache hint on lists. */
export function completeResult(method: string, result: Json): Json {
  const out: Json = { resultType: "complete", ...result }
  if (CACHED.has(method)) {
    out.ttlMs ??= 0
    out.cacheScope ??= "private"
  }
  // Task support is the extension's business in this revision, not a tool's `execution`.
  if (method === "tools/list" && Array.isArray(out.tools))
    out.tools = out.tools.map((tool) => (isObject(tool) ? withoutKey(tool, "execution") : tool))
  return out
}

const withoutKey = (value: Json, key: string): Json =>
  Object.fromEntries(Object.entries(value).filter(([k]) => k !== key))

/** True for a tools/call the server may answer with a task: a delegating tool, a client declaring the extension. */
export function mayBecomeTask(request: Json): boolean {
  return declaresTasks(request) && isObject(request.params) && TASK_TOOLS.has(String(request.params.name))
}

/**
 * A delegating call that came back `running` (it outlasted the sync budget) as the extension's task: the
 * client then polls instead of the parent model. Any other result stays a result.
 */
export function taskOfRunning(result: Json): Json | undefined {
  const structured = result.structuredContent
  if (!isObject(structured) || structured.status !== "running") return undefined
  const id = structured.task_id ?? structured.group_id
  if (typeof id !== "string" || !id) return undefined
  return { resultType: "task", taskId: id, status: "working", statusMessage: "started", pollIntervalMs: POLL_MS }
}

/** An SDK task (2025-11-25: ttl, pollInterval) as the extension's (ttlMs, pollIntervalMs). */
export function extensionTask(task: Json): Json {
  const { ttl, pollInterval, _meta: _, ...rest } = task
  return {
    resultType: "complete",
    ...rest,
    ...(typeof ttl === "number" && { ttlMs: ttl }),
    ...(typeof pollInterval === "number" && { pollIntervalMs: pollInterval }),
  }
}

/** A task that ended with a result to read (completed or failed; cancelled has none to give). */
export const hasResult = (task: Json) => task.status === "completed" || task.status === "failed"

/** The polled task, completed with the tool's result, as tasks/get carries it in this revision. */
export function completedTask(task: Json, result: Json): Json {
  const { _meta: _, ...payload } = result
  return { ...extensionTask(task), status: "completed", result: payload }
}
