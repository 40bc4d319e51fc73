// Protocol hygiene of the compiled binary over stdio, and a seeded fuzz: every request with an id is
// answered, nothing runs before `initialize`, an oversize line is refused without exiting, malformed
// arguments read like every other refusal, and no invalid input starts a session (the scripted model
// sees no request at all).
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import type { Spawned } from "../../src/util/process"
import { BINARY, connectStdio, TEST_PATH, textOf } from "../helpers/mcp"
import { leftoversAfter } from "../helpers/leftovers"

let model: ScriptedModel
let home: IsolatedHome

beforeAll(async () => {
  model = await startScriptedModel()
  home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
})
afterAll(async () => {
  if (home) await stopServer(home.paths)
  await model?.stop()
  await home?.dispose()
})

/** mulberry32: the same seed gives the same run, so a failure can be replayed. */
function random(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A raw stdio peer: frames out, parsed responses in. */
async function raw(): Promise<{
  proc: Spawned
  send(line: string): void
  responses: Record<string, unknown>[]
  close(): Promise<void>
}> {
  const proc = Bun.spawn([BINARY, "serve"], {
    env: home.env as Record<string, string>,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  })
  const responses: Record<string, unknown>[] = []
  void (async () => {
    let buffer = ""
    for await (const chunk of proc.stdout) {
      buffer += new TextDecoder().decode(chunk)
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines) if (line.trim()) responses.push(JSON.parse(line))
    }
  })()
  return {
    proc: {
      pid: proc.pid,
      exited: proc.exited,
      stdout: proc.stdout,
      stderr: new ReadableStream(),
      kill: async () => proc.kill(),
    },
    send: (line) => {
      proc.stdin.write(`${line}\n`)
      void proc.stdin.flush()
    },
    responses,
    close: async () => {
      proc.stdin.end()
      proc.kill()
      await proc.exited
    },
  }
}

const until = async (check: () => boolean, ms = 15_000) => {
  const deadline = Date.now() + ms
  while (!check() && Date.now() < deadline) await Bun.sleep(20)
  return check()
}

const initialize = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } },
  })

test("edges: before initialize, bad params, reserved names, an 11 MB line; every id answered, the server lives on", async () => {
  const peer = await raw()
  try {
    const byId = (id: number) =>
      peer.responses.find((r) => r.id === id) as
        | { error?: { code: number; message: string }; result?: CallToolResult }
        | undefined
    peer.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "scout", arguments: { cwd: "/tmp", task: "x" } },
      }),
    )
    expect(await until(() => byId(1) !== undefined)).toBe(true)
    expect(byId(1)!.error).toMatchObject({ code: -32002 })
    peer.send(initialize(2))
    peer.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
    peer.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "scout", arguments: 5 } }))
    peer.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "scout", arguments: { constructor: 1, cwd: "/x", task: "y" } },
      }),
    )
    peer.send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: 5 }))
    peer.send(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "tools/list", params: "x" }))
    peer.send(
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "scout", arguments: { cwd: 5 } } }),
    )
    peer.send(
      `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"scout","arguments":{"cwd":"/x","task":"${"x".repeat(11 * 1024 * 1024)}"}}}`,
    )
    peer.send(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }))
    expect(await until(() => [2, 3, 4, 5, 6, 7, 9].every((id) => byId(id)))).toBe(true)
    expect(byId(3)!.result!.isError).toBe(true)
    expect(textOf(byId(3)!.result!)).toContain('"arguments" must be an object')
    expect(textOf(byId(4)!.result!)).toContain('The argument name "constructor" is not accepted')
    expect(byId(5)!.error).toMatchObject({ code: -32602 })
    expect(byId(6)!.error).toMatchObject({ code: -32602 })
    expect(textOf(byId(7)!.result!)).toMatch(/^Invalid arguments for scout:\n {2}- cwd: .*expected string/)
    expect(textOf(byId(7)!.result!)).toContain("next:")
    expect(
      peer.responses.some(
        (r) => r.id === null && String((r.error as { message: string }).message).startsWith("Request too large"),
      ),
    ).toBe(true)
    expect((byId(9)!.result as unknown as { tools: unknown[] }).tools.length).toBeGreaterThan(5)
    expect(model.stepRequests().length).toBe(0)
  } finally {
    await peer.close()
  }
}, 60_000)

const TOOLS = ["scout", "worker", "runner", "task_status", "task_result", "task_cancel", "task_list", "task_continue"]
const BAD_CWDS = [
  "",
  "relative/dir",
  "/",
  "/etc",
  "/nonexistent/x",
  "/proc/self",
  "/tmp",
  "~",
  "/dev/null",
  "\u0000",
  "/tmp/../etc",
]

function fuzzValue(next: () => number, depth = 0): unknown {
  const pick = Math.floor(next() * 10)
  if (pick === 0) return null
  if (pick === 1) return Math.floor(next() * 1e9) - 5e8
  if (pick === 2) return next() < 0.5
  if (pick === 3) return "x".repeat(Math.floor(next() * 3) === 0 ? 70_000 : Math.floor(next() * 40))
  if (pick === 4) return "\u{1F600}\u0000\n../".repeat(Math.floor(next() * 5))
  if (pick === 5 && depth < 2) return [fuzzValue(next, depth + 1), fuzzValue(next, depth + 1)]
  if (pick === 6 && depth < 2) return { a: fuzzValue(next, depth + 1) }
  if (pick === 7) return `task_${Math.floor(next() * 1e6).toString(36)}_deadbeef`
  if (pick === 8) return -1
  return BAD_CWDS[Math.floor(next() * BAD_CWDS.length)]
}

test("fuzz: 3,000 invalid tool calls and 300 raw frames, seeded; no crash, no hang, every id answered, no session", async () => {
  const seed = 20261130
  const next = random(seed)
  const client = await connectStdio(home.env)
  let answered = 0
  try {
    for (let i = 0; i < 3000; i++) {
      const tool = TOOLS[Math.floor(next() * TOOLS.length)]!
      const args: Record<string, unknown> = {}
      for (const name of [
        "cwd",
        "task",
        "command",
        "objective",
        "task_id",
        "wait_seconds",
        "status",
        "limit",
        "timeout_seconds",
        "model",
        "idempotency_key",
        "extra",
      ])
        if (next() < 0.4) args[name] = fuzzValue(next)
      // Every delegation gets a workspace it may not use, so a call that passes validation is still refused.
      if (["scout", "worker", "runner"].includes(tool)) args.cwd = BAD_CWDS[Math.floor(next() * BAD_CWDS.length)]
      const result = (await client.client.callTool(
        { name: tool, arguments: args },
        {
          timeout: 30_000,
        },
      )) as CallToolResult
      expect(Array.isArray(result.content)).toBe(true)
      if (!result.isError && tool !== "task_list")
        throw new Error(`seed ${seed} call ${i}: ${tool} ${JSON.stringify(args).slice(0, 200)} was accepted`)
      answered++
    }
  } finally {
    await client.close()
  }
  expect(answered).toBe(3000)

  const peer = await raw()
  try {
    peer.send(initialize(0))
    peer.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
    const ids: number[] = []
    let unattributable = 0
    for (let i = 1; i <= 300; i++) {
      const shape = Math.floor(next() * 8)
      const frame: Record<string, unknown> = { jsonrpc: "2.0", id: i }
      if (shape === 0) frame.method = "tools/call"
      else if (shape === 1) Object.assign(frame, { method: "tools/call", params: fuzzValue(next) })
      else if (shape === 2)
        Object.assign(frame, {
          method: "tools/call",
          params: { name: TOOLS[i % TOOLS.length], arguments: fuzzValue(next) },
        })
      else if (shape === 3) Object.assign(frame, { method: `no/such/${i}`, params: {} })
      else if (shape === 4) Object.assign(frame, { jsonrpc: "1.0", method: "tools/list" })
      else if (shape === 5) Object.assign(frame, { method: "tools/list", params: fuzzValue(next) })
      else if (shape === 6) Object.assign(frame, { method: "resources/list" })
      if (shape === 7) {
        peer.send(next() < 0.5 ? `{"id": ${i}, broken` : "\u0000\u0001garbage")
        unattributable++
        continue
      }
      ids.push(i)
      peer.send(JSON.stringify(frame))
    }
    peer.send(JSON.stringify({ jsonrpc: "2.0", id: 10_000, method: "tools/list" }))
    const seen = () => new Set(peer.responses.map((r) => r.id))
    expect(await until(() => ids.every((id) => seen().has(id)) && seen().has(10_000), 30_000)).toBe(true)
    expect(peer.responses.filter((r) => r.id === null).length).toBeGreaterThanOrEqual(unattributable)
    // Exactly one answer per id.
    expect(peer.responses.filter((r) => typeof r.id === "number").length).toBe(ids.length + 2)
  } finally {
    await peer.close()
  }
  expect(model.stepRequests().length).toBe(0)
}, 180_000)

test("after the last MCP process leaves, nothing it started is left running within 15 s", async () => {
  expect(await leftoversAfter(home.root)).toEqual([])
}, 30_000)
