// Until its first tool call `serve` answers tools/list from src/mcp/tools-list.json and has loaded no
// tool (src/mcp/listed.ts). What must hold: the written list is the tools' own, byte for byte; the list
// a client reads is the same before and after the tools load, with native tasks offered alike; the first
// call (a bad one, a native task) reaches the tool as before; loading tells the client of no change.
// In-process over the SDK's in-memory transport: nothing is delegated, so no OpenCode is started.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { readFlags } from "../../src/config/flags"
import { Delegations } from "../../src/engine/lifecycle"
import { Runtime } from "../../src/engine/capacity/runtime"
import { createServer } from "../../src/mcp/server"
import { backendOf } from "../helpers/in-process"
import { liveToolsList, TOOLS_LIST, toolsListCurrent } from "../../scripts/tools-list"
import { tempDir, type TempDir } from "../helpers/temp"

let home: TempDir
let runtime: Runtime
const closers: (() => Promise<void>)[] = []

beforeAll(async () => {
  home = await tempDir("oc-orch-listed-")
  runtime = new Runtime(readFlags({ HOME: home.path, PATH: "/usr/bin:/bin" }))
})
afterAll(async () => {
  for (const close of closers) await close()
  runtime.close()
  await home?.[Symbol.asyncDispose]()
})

/** A fresh server (its tools not loaded) and a client; `changed` counts tools/list_changed notifications. */
async function connect(capabilities: Record<string, unknown> = {}) {
  const server = createServer(backendOf(new Delegations(runtime)))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "listed-tests", version: "1" }, { capabilities })
  const changed = { count: 0 }
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed.count++
  })
  await client.connect(clientSide)
  closers.push(async () => {
    await client.close()
    await server.close()
  })
  return { server, client, changed }
}

const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text

describe("the written list", () => {
  test("is the tools' own, key order included", async () => {
    expect(await toolsListCurrent()).toBe(true)
  })

  test("control: a list that differs in one description, or only in key order, is not current", async () => {
    const live = await liveToolsList()
    const [first, ...rest] = live.tools
    const edited = { ...live, tools: [{ ...first!, description: `${first!.description} ` }, ...rest] }
    const { name, ...others } = first!
    const reordered = { ...live, tools: [{ ...others, name }, ...rest] }
    const original = await Bun.file(TOOLS_LIST).text()
    try {
      for (const planted of [edited, reordered]) {
        await Bun.write(TOOLS_LIST, JSON.stringify(planted))
        expect(await toolsListCurrent()).toBe(false)
      }
      await Bun.write(TOOLS_LIST, "{ garbled")
      expect(await toolsListCurrent()).toBe(false)
    } finally {
      await Bun.write(TOOLS_LIST, original)
    }
    expect(await toolsListCurrent()).toBe(true)
  })
})

describe("served before and after the tools load", () => {
  test("the list is the same, and loading sends no tools/list_changed", async () => {
    const { client, changed } = await connect()
    const before = await client.listTools()
    // The first call loads the tools; a malformed task id is refused by the tool itself.
    const refused = await client.callTool({ name: "task_status", arguments: { task_id: "not-a-task" } })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toContain("not-a-task")
    const after = await client.listTools()
    expect(JSON.stringify(after)).toBe(JSON.stringify(before))
    expect(before.tools.map((tool) => tool.name)).toContain("scout")
    await Bun.sleep(50)
    expect(changed.count).toBe(0)
  })

  test("control: a tool registered once connected does tell the client, so the count above can fail", async () => {
    const { server, client, changed } = await connect()
    await client.callTool({ name: "task_status", arguments: { task_id: "not-a-task" } })
    server.registerTool("planted", { description: "planted" }, async () => ({ content: [] }))
    await Bun.sleep(50)
    expect(changed.count).toBe(1)
  })

  test("a first call with bad arguments gets the schema's refusal, as a loaded server gives it", async () => {
    const first = await (await connect()).client.callTool({ name: "scout", arguments: { cwd: 7 } })
    const loaded = await connect()
    await loaded.client.callTool({ name: "task_status", arguments: { task_id: "not-a-task" } })
    const second = await loaded.client.callTool({ name: "scout", arguments: { cwd: 7 } })
    expect(first.isError).toBe(true)
    expect(textOf(first)).toContain("cwd")
    expect(textOf(first)).toBe(textOf(second))
  })

  test("a client that declares tasks is offered them on the written list as on the loaded one", async () => {
    const { client } = await connect({ tasks: {} })
    const offered = (tools: { name: string; execution?: { taskSupport?: string } }[]) =>
      tools.filter((tool) => tool.execution?.taskSupport === "optional").map((tool) => tool.name)
    const before = offered((await client.listTools()).tools)
    await client.callTool({ name: "task_status", arguments: { task_id: "not-a-task" } })
    expect(offered((await client.listTools()).tools)).toEqual(before)
    expect(before).toEqual(["scout", "worker", "delegate_parallel", "runner", "task_continue"])
  })
})
