// The 2026-07-28 link on its own, frame by frame: which clients it takes over (only a discover declaring the
// tasks extension; a client that initialized, or discovers without it, passes through as before), what the
// SDK and the client each see, and which results become tasks (a delegating call's `running`, nothing
// else). The real client is test/e2e/claude-native-tasks.test.ts.
import { expect, test } from "bun:test"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { RevisionLink } from "../../src/mcp/revision-link"

type Frame = Record<string, unknown> & { id?: string | number; result?: Record<string, unknown> }

const CLIENT = { name: "claude-code", version: "2.1.332" }
const envelope = (extensions?: Record<string, unknown>) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": CLIENT,
  "io.modelcontextprotocol/clientCapabilities": { roots: {}, ...(extensions && { extensions }) },
})
const TASKS = { "io.modelcontextprotocol/tasks": {} }
const discover = (extensions?: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id: "probe", method: "server/discover", params: { _meta: envelope(extensions) } })
/** `extensions: null`: a request whose envelope declares none. */
const call = (id: number, name: string, extensions: Record<string, unknown> | null = TASKS) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: {}, _meta: { ...envelope(extensions ?? undefined), progressToken: 7 } },
  })

function link() {
  const server: Frame[] = []
  const client: Frame[] = []
  const it = new RevisionLink({
    toServer: (message) => server.push(message as Frame),
    toClient: (message) => client.push(message as Frame),
  })
  const out = (frame: Frame) => it.outbound(frame as unknown as JSONRPCMessage) as Frame | undefined
  return { it, server, client, out }
}

/** A link past its discover: the SDK initialized behind it. */
function modern() {
  const ends = link()
  expect(ends.it.inbound(discover(TASKS))).toBeUndefined()
  const init = ends.server[0]!
  const info = { name: "opencode-mcp-orchestrator", version: "1" }
  const result = { protocolVersion: "2025-11-25", capabilities: { tools: {}, tasks: {} }, serverInfo: info }
  expect(ends.out({ jsonrpc: "2.0", id: init.id, result })).toBeUndefined()
  return ends
}

const running = { structuredContent: { task_id: "task_ab_12345678", status: "running" }, content: [] }

test("a discover declaring the tasks extension is answered from the SDK's initialize, which it never sees", () => {
  const { it, server, client } = modern()
  expect(server.map((frame) => frame.method)).toEqual(["initialize", "notifications/initialized"])
  expect(server[0]!.params).toEqual({ protocolVersion: "2025-11-25", capabilities: {}, clientInfo: CLIENT })
  expect(client).toEqual([
    {
      jsonrpc: "2.0",
      id: "probe",
      result: expect.objectContaining({
        resultType: "complete",
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: {}, extensions: TASKS },
      }),
    },
  ])
  // A second discover on the connection gets the same answer, with no second initialize.
  expect(it.inbound(discover(TASKS))).toBeUndefined()
  expect(client[1]!.result).toEqual(client[0]!.result)
  expect(server).toHaveLength(2)
})

test.each([
  ["a discover without the extension", [discover()]],
  ["a discover after initialize", [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize" }), discover(TASKS)]],
])("control: %s is handed on untouched, as before", (_, lines) => {
  const { it, server, client, out } = link()
  for (const line of lines) expect(it.inbound(line)).toBe(line)
  expect([server, client]).toEqual([[], []])
  const frame = { jsonrpc: "2.0", id: 2, result: running }
  expect(out(frame)).toBe(frame)
})

test("requests lose the envelope, keep the rest of _meta; results get resultType and the cache hint", () => {
  const { it, out } = modern()
  const forwarded = JSON.parse(it.inbound(call(3, "scout"))!) as { params: Record<string, unknown> }
  expect(forwarded.params).toEqual({ name: "scout", arguments: {}, _meta: { progressToken: 7 } })
  const list = JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list", params: { _meta: envelope(TASKS) } })
  expect(JSON.parse(it.inbound(list)!).params).toEqual({})
  const tools = [{ name: "scout", inputSchema: { type: "object" }, execution: { taskSupport: "optional" } }]
  expect(out({ jsonrpc: "2.0", id: 4, result: { tools } })!.result).toEqual({
    resultType: "complete",
    ttlMs: 0,
    cacheScope: "private",
    tools: [{ name: "scout", inputSchema: { type: "object" } }],
  })
})

test.each([
  ["a delegating call that came back running becomes a task", call(5, "scout"), "task"],
  ["control: the same without the extension stays a result", call(5, "scout", null), "complete"],
  ["control: task_status's running answer stays a result", call(5, "task_status"), "complete"],
])("%s", (_, line, kind) => {
  const { it, out } = modern()
  it.inbound(line)
  const answered = out({ jsonrpc: "2.0", id: 5, result: running })!.result!
  expect(answered.resultType).toBe(kind)
  if (kind === "task") expect(answered).toMatchObject({ taskId: "task_ab_12345678", status: "working" })
})

test("tasks/get carries the tool's result once the task has ended; a working task is answered as it is", () => {
  const { it, server, client, out } = modern()
  const get = (id: number) =>
    JSON.stringify({ jsonrpc: "2.0", id, method: "tasks/get", params: { taskId: "t", _meta: envelope(TASKS) } })
  it.inbound(get(6))
  const working = { taskId: "t", status: "working", ttl: null, pollInterval: 1000 }
  expect(out({ jsonrpc: "2.0", id: 6, result: working })!.result).toEqual({
    resultType: "complete",
    taskId: "t",
    status: "working",
    pollIntervalMs: 1000,
  })
  it.inbound(get(7))
  expect(out({ jsonrpc: "2.0", id: 7, result: { ...working, status: "completed" } })).toBeUndefined()
  const read = server.at(-1)!
  expect(read).toMatchObject({ method: "tasks/result", params: { taskId: "t" } })
  const result = { content: [{ type: "text", text: "tally is in README.md" }], _meta: { x: 1 } }
  expect(out({ jsonrpc: "2.0", id: read.id, result })).toBeUndefined()
  expect(client.at(-1)).toEqual({
    jsonrpc: "2.0",
    id: 7,
    result: expect.objectContaining({ status: "completed", result: { content: result.content } }),
  })
})

test("a client request using the link's own id prefix is refused, not mistaken for the link's", () => {
  const { it, client, server } = modern()
  const line = JSON.stringify({ jsonrpc: "2.0", id: "revision-2026-link:1", method: "ping" })
  expect(it.inbound(line)).toBeUndefined()
  expect(client.at(-1)).toMatchObject({ id: "revision-2026-link:1", error: { code: -32600 } })
  expect(server).toHaveLength(2)
})
