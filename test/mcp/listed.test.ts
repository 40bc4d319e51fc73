// `serve` answers tools/list from dist/tools-list.json (the build writes it) and loads no tool for it
// (src/mcp/server.ts).
// What must hold: the written list is the tools' own, byte for byte; the list a client reads is the same
// before and after the first call loads the tools; the first call (a bad one) reaches the tool as a loaded
// server's would. In-process over the SDK's in-memory transport: nothing is delegated, no OpenCode starts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Client, InMemoryTransport, type CallToolResult } from "@modelcontextprotocol/client"
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

/** A fresh server (its tools not loaded) and a client. */
async function connect() {
  const server = createServer(backendOf(new Delegations(runtime)))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "listed-tests", version: "1" })
  await client.connect(clientSide)
  closers.push(async () => {
    await client.close()
    await server.close()
  })
  return { server, client }
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
    // Planted beside the build's list, never over it: a `serve` another test file starts reads that one.
    const planted = `${home.path}/tools-list.json`
    for (const list of [edited, reordered]) {
      await Bun.write(planted, JSON.stringify(list))
      expect(await toolsListCurrent(planted)).toBe(false)
    }
    await Bun.write(planted, "{ garbled")
    expect(await toolsListCurrent(planted)).toBe(false)
    await Bun.write(planted, await Bun.file(TOOLS_LIST).text())
    expect(await toolsListCurrent(planted)).toBe(true)
  })

  // The schemas carry no dialect line, so a 2025-11-25 client reads them as 2020-12; the keywords below are where
  // draft-07 (what zod writes them as) means something else.
  const DIALECT_KEYWORDS = ["definitions", "dependencies", "additionalItems", "exclusiveMinimum", "exclusiveMaximum"]
  const dialectBound = (value: unknown): string[] => {
    if (Array.isArray(value)) return value.flatMap(dialectBound)
    if (typeof value !== "object" || value === null) return []
    return Object.entries(value).flatMap(([key, inner]) => [
      ...(DIALECT_KEYWORDS.includes(key) || (key === "items" && Array.isArray(inner)) ? [key] : []),
      ...dialectBound(inner),
    ])
  }

  test("no schema uses a keyword draft-07 and 2020-12 read differently", async () => {
    expect(dialectBound((await liveToolsList()).tools)).toEqual([])
  })

  test("control: a tuple and an exclusive bound are found", () => {
    const planted = { properties: { pair: { items: [{ type: "string" }] }, n: { exclusiveMinimum: 0 } } }
    expect(dialectBound(planted)).toEqual(["items", "exclusiveMinimum"])
  })
})

describe("served before and after the tools load", () => {
  test("the list is the same", async () => {
    const { client } = await connect()
    const before = await client.listTools()
    // The first call loads the tools; a malformed task id is refused by the tool itself.
    const refused = await client.callTool({ name: "task_status", arguments: { task_id: "not-a-task" } })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toContain("not-a-task")
    const after = await client.listTools()
    expect(JSON.stringify(after)).toBe(JSON.stringify(before))
    expect(before.tools.map((tool) => tool.name)).toContain("scout")
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
})
