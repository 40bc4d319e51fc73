// What reaches the MCP server from the wire, decided per frame before the SDK sees it: every request
// with an id gets an answer (the SDK leaves some malformed ones unanswered, and answers others with a
// raw zod dump as an internal error), nothing runs before `initialize`, and a tool call's arguments
// are an object of ordinary names. Pure: a frame in, a verdict out.
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

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
  const parsed = JSONRPCMessageSchema.safeParse(json)
  if (!parsed.success) {
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
  const message = parsed.data
  if (method === "initialize") {
    state.initialized = true
    return { forward: message }
  }
  if (id !== undefined && method !== undefined && !state.initialized && method !== "ping")
    return {
      reply: errorFrame(
        id,
        NOT_INITIALIZED,
        `Server not initialized: send "initialize" (and then "notifications/initialized") before ${method}.`,
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
