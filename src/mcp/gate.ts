// What reaches the MCP server from the wire, decided per frame before the SDK sees it: every request
// with an id gets an answer (the SDK drops a line that is not JSON, or not JSON-RPC, without one, and
// answers a tool call's malformed arguments with a zod dump), nothing runs before the client opened the
// connection (`initialize`; a 2026-07-28 request opens itself with its envelope), and a tool call's
// arguments are an object of ordinary names. Pure: a frame in, a verdict out.
import { parseJSONRPCMessage, type JSONRPCMessage } from "@modelcontextprotocol/server"

export type GateAction = { forward: JSONRPCMessage } | { reply: JSONRPCMessage } | { drop: true }

const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
const INVALID_PARAMS = -32602
/** MCP's "server not initialized". */
const NOT_INITIALIZED = -32002

/** Argument names that JavaScript objects treat specially; no tool has them, and zod mis-reads them. */
const RESERVED_NAMES = new Set(["__proto__", "constructor", "prototype"])

type Id = string | number | null

const errorFrame = (id: Id, code: number, message: string): JSONRPCMessage =>
  ({ jsonrpc: "2.0", id, error: { code, message } }) as JSONRPCMessage

/** A tool's own kind of failure: the caller sees `isError` with the field and the fix, like every other refusal. */
const toolError = (id: string | number, text: string): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text }], isError: true },
})

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export interface GateState {
  initialized: boolean
}

export function gate(line: string, state: GateState): GateAction {
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch {
    // Not JSON: the parse error below is the answer, and it says so.
    return {
      reply: errorFrame(null, PARSE_ERROR, "Parse error: the line is not JSON. Send one JSON-RPC message per line."),
    }
  }
  const id: Id | undefined =
    isObject(json) && (typeof json.id === "string" || typeof json.id === "number") ? json.id : undefined
  const method = isObject(json) && typeof json.method === "string" ? json.method : undefined
  if (
    id !== undefined &&
    method !== undefined &&
    json !== null &&
    isObject(json) &&
    json.params !== undefined &&
    !isObject(json.params)
  )
    return { reply: errorFrame(id, INVALID_PARAMS, `Invalid params for ${method}: "params" must be an object.`) }
  const message = readMessage(json)
  if (!message) {
    // A notification or a response we cannot read has nobody waiting on an answer.
    if (id === undefined) return { drop: true }
    return {
      reply: errorFrame(
        id,
        INVALID_REQUEST,
        'Invalid request: expected a JSON-RPC 2.0 message with "jsonrpc": "2.0", an id and a method.',
      ),
    }
  }
  if (method === "initialize" || method === "server/discover" || (isObject(json) && claimsRevision(json))) {
    state.initialized = true
    return { forward: message }
  }
  if (id !== undefined && method !== undefined && !state.initialized && method !== "ping")
    return {
      reply: errorFrame(
        id,
        NOT_INITIALIZED,
        `Server not initialized: send "initialize" (and then "notifications/initialized") before ${method}, or ` +
          `name the protocol revision in the request's _meta.`,
      ),
    }
  if (method === "tools/call" && id !== undefined) {
    const params = isObject(json) && isObject(json.params) ? json.params : undefined
    if (!params || typeof params.name !== "string")
      return { reply: errorFrame(id, INVALID_PARAMS, 'Invalid params for tools/call: "name" (a string) is required.') }
    const args = params.arguments
    if (args !== undefined && !isObject(args))
      return {
        reply: toolError(
          id,
          `"arguments" must be an object of named arguments, got ` +
            `${Array.isArray(args) ? "an array" : args === null ? "null" : typeof args}.\nnext: Call ` +
            `${params.name} with arguments like {"cwd": "/abs/repo", "task": "…"}; tools/list gives each tool's ` +
            `schema.`,
        ),
      }
    const reserved = args === undefined ? undefined : Object.keys(args).find((name) => RESERVED_NAMES.has(name))
    if (reserved)
      return {
        reply: toolError(
          id,
          `The argument name "${reserved}" is not accepted.\nnext: Remove it; tools/list gives each tool's arguments.`,
        ),
      }
  }
  return { forward: message }
}

function readMessage(json: unknown): JSONRPCMessage | undefined {
  try {
    return parseJSONRPCMessage(json)
  } catch {
    // Not a JSON-RPC message: the caller answers it with what a message needs.
    return undefined
  }
}

/** A 2026-07-28 request names its revision in its `_meta` envelope, and needs no handshake before it. */
function claimsRevision(json: Record<string, unknown>): boolean {
  const meta = isObject(json.params) ? json.params._meta : undefined
  return isObject(meta) && typeof meta["io.modelcontextprotocol/protocolVersion"] === "string"
}
