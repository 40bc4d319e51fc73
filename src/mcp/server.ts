// The MCP server: the SDK's Server, for both revisions (serveStdio picks the one the client opens with),
// serving one tool per file under tools/ (toolset.ts) and the instructions the parent reads first.
// `tools/list` is answered from dist/tools-list.json, which the build writes from the tools
// (scripts/tools-list.ts) and test/mcp/listed.test.ts holds equal to them: building the tools' zod
// schemas was most of what a server spent before its first answer, so they load with the first call.
// Each call runs on a backend opened then (define.ts): `serve` loads the engine and builds the Delegations
// that recovers the task records an earlier process left. The low-level Server rather than the McpServer:
// the tools are listed from the written list and checked with their own zod schemas, whose wrong fields a
// parent reads as "field: problem" with a next step (define.ts) where the McpServer answers with a zod dump.
import { ProtocolError, ProtocolErrorCode, Server, type ServerContext } from "@modelcontextprotocol/server"
import { SERVER_NAME, VERSION } from "../version"
import type { OpenBackend, Peer } from "./define"
import instructions from "./instructions.md" with { type: "text" }
import { requestStateCheck, type RoundState } from "./request-state"
import { RelayGate } from "./relay-gate"
import { asTask, declaresForms, offerTasks, TASKS_EXTENSION } from "./tasks"
import listed from "../../dist/tools-list.json"

const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"

/**
 * One server a connection (serveStdio's factory); what it keeps across calls is that connection's relay gate.
 * `roles`: the lines naming the person's own roles (src/roles/instructions.ts), after the instructions.
 */
export function createServer(open: OpenBackend, roles = ""): Server {
  const capabilities = { tools: {}, extensions: { [TASKS_EXTENSION]: {} } }
  const server = new Server(
    { name: SERVER_NAME, version: VERSION },
    { capabilities, instructions: instructions + roles, requestState: requestStateCheck },
  )
  const gate = new RelayGate()
  server.setRequestHandler("tools/list", () => listed as { tools: [] })
  server.setRequestHandler("tools/call", async (request, extra) => {
    const { name, arguments: args } = request.params
    const { TOOLS } = await import("./toolset")
    const tool = TOOLS.find((tool) => tool.name === name)
    if (!tool)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool ${name}: tools/list gives the tools.`)
    const result = await tool.call(args, { peer: peerOf(server, extra, gate, name), extra }, open)
    return asTask(name, result, extra, open)
  })
  offerTasks(server, open)
  return server
}

/**
 * The client behind this request. A 2026-07-28 request names it and what it can do in its envelope, and cannot be
 * asked anything while it waits (the revision has no requests from server to client): a client that can put a form
 * to the person is asked in rounds of `input_required` (input-rounds.ts). A 2025 client named both when it
 * initialized, and is asked in the middle of the call.
 */
function peerOf(server: Server, extra: ServerContext, gate: RelayGate, tool: string): Peer {
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined
  const modern = envelope?.[PROTOCOL_VERSION_KEY] !== undefined
  const info = modern ? (envelope?.[CLIENT_INFO_KEY] as { name?: unknown } | undefined) : server.getClientVersion()
  const forms = declaresForms(extra)
  return {
    name: typeof info?.name === "string" ? info.name : undefined,
    elicits: !modern && server.getClientCapabilities()?.elicitation !== undefined,
    ...(modern && forms ? { rounds: { tool, state: extra.mcpReq.requestState<RoundState>() } } : {}),
    connected: () => server.transport !== undefined,
    gate,
  }
}
