// What `serve` (the compiled binary, over stdio) serves on the wire for protocol revision 2026-07-28, raw
// lines in and out: the SDK's serveStdio picks the era from the opening, so a `server/discover` carrying the
// `_meta` envelope (whether or not it declares the tasks extension) is answered with the supported versions,
// the tasks extension and the instructions, and
// every 2026-07-28 result carries `resultType` (a list a cache hint; the tools are the written list,
// dist/tools-list.json), while a 2025 `initialize` on a fresh process still gets the old handshake and
// old results. Before any opening, a request without an envelope is refused and a line that is not JSON is a
// parse error (the gate). What a client gets from the tasks extension itself is
// test/mcp/native-tasks.test.ts; the real client is test/e2e/claude-native-tasks.test.ts.
import { afterAll, beforeAll, expect, test } from "bun:test"
import instructions from "../../src/mcp/instructions.md" with { type: "text" }
import listed from "../../dist/tools-list.json"
import { SERVER_NAME } from "../../src/version"
import { BINARY } from "../helpers/mcp"
import { tempDir, type TempDir } from "../helpers/temp"

type Frame = {
  id?: string | number | null
  result?: Record<string, unknown>
  error?: { code: number; message: string }
}

const TASKS = "io.modelcontextprotocol/tasks"
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "orchestrator-tests", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
}

let home: TempDir
const procs: Bun.Subprocess[] = []

beforeAll(async () => {
  home = await tempDir("oc-orch-revision-")
})
afterAll(async () => {
  for (const proc of procs) {
    proc.kill()
    await proc.exited
  }
  await home?.[Symbol.asyncDispose]()
})

/** A fresh `serve`: lines out, every frame it writes back in order. */
function serve() {
  const proc = Bun.spawn([BINARY, "serve"], {
    env: { HOME: home.path, PATH: "/usr/bin:/bin" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  })
  procs.push(proc)
  const frames: Frame[] = []
  void (async () => {
    let buffer = ""
    const decoder = new TextDecoder()
    for await (const chunk of proc.stdout) {
      buffer += decoder.decode(chunk, { stream: true })
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines.filter((line) => line.trim())) frames.push(JSON.parse(line) as Frame)
    }
  })()
  const send = (line: string) => {
    proc.stdin.write(`${line}\n`)
    void proc.stdin.flush()
  }
  /** The frame answering `id` (answers may come out of order). */
  const answer = async (id: string | number | null): Promise<Frame> => {
    for (let waited = 0; waited < 20_000; waited += 20) {
      const frame = frames.find((frame) => frame.id === id)
      if (frame) return frame
      await Bun.sleep(20)
    }
    throw new Error(`no answer to ${id}; got ${JSON.stringify(frames).slice(0, 2000)}`)
  }
  /** Sends a request (params as given, no envelope added) and returns its answer. */
  const request = (id: string | number, method: string, params?: Record<string, unknown>) => {
    send(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params && { params }) }))
    return answer(id)
  }
  return { send, answer, request, frames }
}

test("before any opening, a request without an envelope is refused and a line that is not JSON is a parse error", async () => {
  const wire = serve()
  const early = await wire.request(1, "tools/list")
  expect(early.error?.code).toBe(-32002)
  expect(early.error?.message).toStartWith("Server not initialized")
  wire.send("this is not json")
  const parse = await wire.answer(null)
  expect(parse.error?.code).toBe(-32700)
  expect(parse.error?.message).toContain("not JSON")
  // Neither ended the connection: the opening that follows is served.
  const opened = await wire.request(2, "server/discover", { _meta: ENVELOPE })
  expect(opened.result?.supportedVersions).toContain("2026-07-28")
}, 30_000)

test("server/discover with the envelope: the supported versions, the tasks extension, the instructions", async () => {
  const wire = serve()
  const { result, error } = await wire.request("probe", "server/discover", { _meta: ENVELOPE })
  expect(error).toBeUndefined()
  expect(result).toMatchObject({
    resultType: "complete",
    capabilities: { tools: {}, extensions: { [TASKS]: {} } },
    instructions,
  })
  expect(result?.supportedVersions).toContain("2026-07-28")
  // The 2026-07-28 server names itself in the result's _meta.
  expect(result?._meta).toMatchObject({ "io.modelcontextprotocol/serverInfo": { name: SERVER_NAME } })
}, 30_000)

test("a discover that declares no extension (claude -p) is answered the same; initialize on a fresh process gets 2025", async () => {
  const undeclared = { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": {} }
  const answered = await serve().request("probe", "server/discover", { _meta: undeclared })
  expect(answered.error).toBeUndefined()
  expect(answered.result?.supportedVersions).toContain("2026-07-28")
  const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "old", version: "1" } }
  expect((await serve().request(1, "initialize", params)).result?.protocolVersion).toBe("2025-11-25")
}, 30_000)

test("2026-07-28 requests get resultType complete, a list a cache hint; one without an envelope is refused", async () => {
  const wire = serve()
  await wire.request(1, "server/discover", { _meta: ENVELOPE })
  const { result } = await wire.request(2, "tools/list", { _meta: ENVELOPE })
  expect(result?.resultType).toBe("complete")
  expect(typeof result?.ttlMs).toBe("number")
  expect(["private", "public"]).toContain(result?.cacheScope as string)
  expect(result?.tools).toEqual(listed.tools)
  // A tool call is a 2026-07-28 result too (a refusal of bad arguments is a complete result, not a task).
  const call = await wire.request(3, "tools/call", { name: "scout", arguments: {}, _meta: ENVELOPE })
  expect(call.result).toMatchObject({ resultType: "complete", isError: true })
  // On a 2026-07-28 connection every request carries the envelope.
  const bare = await wire.request(4, "tools/list")
  expect(bare.error?.code).toBe(-32602)
  expect(bare.error?.message).toContain("_meta envelope")
}, 30_000)

test("control: initialize (2025-06-18) on a fresh process still gets the old handshake and old results", async () => {
  const wire = serve()
  const params = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "old", version: "1" } }
  const { result, error } = await wire.request(1, "initialize", params)
  expect(error).toBeUndefined()
  expect(result).toMatchObject({
    protocolVersion: "2025-06-18",
    serverInfo: { name: SERVER_NAME },
    capabilities: { tools: {} },
    instructions,
  })
  expect(result).not.toHaveProperty("resultType")
  expect(result).not.toHaveProperty("supportedVersions")
  wire.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
  const list = await wire.request(2, "tools/list")
  expect(list.result?.tools).toEqual(listed.tools)
  expect(list.result).not.toHaveProperty("resultType")
  expect(list.result).not.toHaveProperty("ttlMs")
}, 30_000)
