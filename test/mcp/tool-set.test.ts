// The registered tool set is a decision, not a side effect: the exact names are pinned, and every tool
// declares an output schema, takes its description from src/mcp/tools/<name>.md and has a row in the
// "Tools" table of docs/tools.md. The checks are one function over a tool list, so the controls plant a tool
// lacking each of them and the same checker must name it. The last block attacks the one wrapper every
// defined tool runs through: whatever `run` throws comes back as `isError` with its `next:` line.
import { Client, InMemoryTransport, type CallToolResult, type Tool } from "@modelcontextprotocol/client"
import { McpServer, Server } from "@modelcontextprotocol/server"
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { existsSync, readFileSync } from "node:fs"
import { z } from "zod"
import { readFlags } from "../../src/config/flags"
import { Delegations } from "../../src/engine/lifecycle"
import { Runtime } from "../../src/engine/capacity/runtime"
import { fail } from "../../src/errors"
import { defineTool } from "../../src/mcp/define"
import { RelayGate } from "../../src/mcp/relay-gate"
import { backendOf } from "../helpers/in-process"
import { TOOLS } from "../../src/mcp/toolset"
import { tempDir, type TempDir } from "../helpers/temp"
import { listOurTools } from "./_surface"

const ROOT = `${import.meta.dir}/../..`

const EXPECTED = [
  "delegate_parallel",
  "models",
  "patch_apply",
  "patch_discard",
  "patch_show",
  "policy",
  "review",
  "runner",
  "scout",
  "session_output",
  "sessions",
  "stats",
  "task_cancel",
  "task_continue",
  "task_list",
  "task_respond",
  "task_result",
  "task_status",
  "worker",
]

interface Sources {
  readme: string
  /** The text of src/mcp/tools/<name>.md, undefined when there is no such file. */
  descriptionFile(name: string): string | undefined
}

/** The names in the first cell of each row of the "Tools" table (docs/tools.md, under its title). */
function readmeToolNames(readme: string): string[] {
  const section = readme.split(/^## Tools\n/m)[1]?.split(/^## /m)[0] ?? ""
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) => [...(line.split("|")[1] ?? "").matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!))
}

/** One line per broken rule: `name: what is missing`. */
function toolSetProblems(tools: Tool[], sources: Sources): string[] {
  const rows = new Set(readmeToolNames(sources.readme))
  return tools.flatMap((tool) => {
    const file = sources.descriptionFile(tool.name)
    return [
      tool.outputSchema?.type !== "object" && `${tool.name}: no output schema`,
      file === undefined && `${tool.name}: no description file src/mcp/tools/${tool.name}.md`,
      file !== undefined && tool.description !== file && `${tool.name}: description is not its .md file`,
      !rows.has(tool.name) && `${tool.name}: no row in the Tools table of docs/tools.md`,
    ].filter((problem): problem is string => typeof problem === "string")
  })
}

const repository: Sources = {
  readme: readFileSync(`${ROOT}/docs/tools.md`, "utf8"),
  descriptionFile: (name) => {
    const path = `${ROOT}/src/mcp/tools/${name}.md`
    return existsSync(path) ? readFileSync(path, "utf8") : undefined
  },
}

let home: TempDir
let tools: Tool[]

beforeAll(async () => {
  home = await tempDir("oc-orch-tool-set-")
  tools = await listOurTools(readFlags({ HOME: home.path, PATH: "/usr/bin:/bin" }))
})

afterAll(async () => {
  await home?.[Symbol.asyncDispose]()
})

describe("the registered tool set", () => {
  test(`is exactly the ${EXPECTED.length} tools, registered once each, as server.ts lists them`, () => {
    expect(tools.map((tool) => tool.name).sort()).toEqual(EXPECTED)
    expect(TOOLS.map((tool) => tool.name).sort()).toEqual(EXPECTED)
    expect(tools.map((tool) => tool.name)).toEqual(TOOLS.map((tool) => tool.name))
  })

  test("every tool has an output schema, its .md description and a row in docs/tools.md", () => {
    expect(toolSetProblems(tools, repository)).toEqual([])
  })

  test("control: a planted tool lacking each is named by the same checker", () => {
    const stats = tools.find((tool) => tool.name === "stats")!
    const { outputSchema: _, ...schemaless } = stats
    const planted: Tool[] = [
      schemaless,
      { ...stats, name: "patch_rebase" },
      { ...stats, name: "scout", description: "An inline description." },
    ]
    expect(toolSetProblems(planted, repository)).toEqual([
      "stats: no output schema",
      "patch_rebase: no description file src/mcp/tools/patch_rebase.md",
      "patch_rebase: no row in the Tools table of docs/tools.md",
      "scout: description is not its .md file",
    ])
    const rowless = { ...repository, readme: repository.readme.replace("| `stats` |", "| stats |") }
    expect(toolSetProblems([stats], rowless)).toEqual(["stats: no row in the Tools table of docs/tools.md"])
  })
})

describe("the one wrapper: whatever run throws is isError with the next step, never a stack", () => {
  let runtime: Runtime
  let client: Client
  let server: Server
  /** The control: a server whose tool the SDK wraps itself (its McpServer). */
  let unwrapped: { client: Client; server: McpServer }
  const thrown: Record<string, () => unknown> = {
    app: () => fail("Usage", "No task task_x.", "Call task_list for the known tasks."),
    type: () => new TypeError("Cannot read properties of undefined (reading 'id')"),
    value: () => "a bare string",
  }
  const planted = defineTool({
    name: "planted",
    title: "Planted",
    description: "A tool that throws what it is told to.",
    input: { throw: z.enum(["app", "type", "value", "none"]), shape: z.enum(["right", "wrong"]).default("right") },
    output: { ok: z.boolean() },
    annotations: { readOnlyHint: true },
    run: async (args) => {
      if (args.throw !== "none") throw thrown[args.throw]!()
      return { text: "fine", structured: args.shape === "right" ? { ok: true } : ({ ok: "yes" } as never) }
    },
  })

  beforeAll(async () => {
    runtime = new Runtime(readFlags({ HOME: home.path, PATH: "/usr/bin:/bin" }))
    const open = backendOf(new Delegations(runtime))
    server = new Server({ name: "wrapper-tests", version: "1" }, { capabilities: { tools: {} } })
    server.setRequestHandler("tools/call", (request, extra) => {
      const peer = { name: undefined, elicits: false, connected: () => true, gate: new RelayGate() }
      return planted.call(request.params.arguments, { peer, extra }, open)
    })
    client = await connected(server)
    // The control: the same failure thrown by a handler the SDK wraps itself.
    const sdk = new McpServer({ name: "wrapper-tests", version: "1" })
    sdk.registerTool("unwrapped", { inputSchema: z.object({}) }, async () => {
      throw thrown.app!()
    })
    unwrapped = { server: sdk, client: await connected(sdk) }
  })

  async function connected(to: Server | McpServer): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await to.connect(serverSide)
    const connecting = new Client({ name: "wrapper-tests", version: "1" })
    await connecting.connect(clientSide)
    return connecting
  }

  afterAll(async () => {
    await client?.close()
    await server?.close()
    await unwrapped?.client.close()
    await unwrapped?.server.close()
    runtime?.close()
  })

  const call = async (name: string, args: Record<string, unknown>) => {
    const through = name === "unwrapped" ? unwrapped.client : client
    const result = (await through.callTool({ name, arguments: args })) as CallToolResult
    const first = result.content[0]
    return { result, text: first?.type === "text" ? first.text : "" }
  }

  test("a named error keeps its message and hint as the next: line", async () => {
    const { result, text } = await call("planted", { throw: "app" })
    expect(result.isError).toBe(true)
    expect(text).toBe("No task task_x.\nnext: Call task_list for the known tasks.")
  })

  test.each(["type", "value"])("an unnamed throw (%s) is an internal error in one line, no stack", async (kind) => {
    const { result, text } = await call("planted", { throw: kind })
    expect(result.isError).toBe(true)
    expect(text).toStartWith("internal error: ")
    expect(text).not.toContain("\n")
    expect(text).not.toMatch(/\bat .*\.ts:\d+/)
  })

  test("an answer is text plus structured content; one that breaks its output schema is refused", async () => {
    const fine = await call("planted", { throw: "none" })
    expect(fine.result.isError).toBeFalsy()
    expect(fine.text).toBe("fine")
    expect(fine.result.structuredContent).toEqual({ ok: true })
    const wrong = await call("planted", { throw: "none", shape: "wrong" })
    expect(wrong.result.isError).toBe(true)
    expect(wrong.text).toContain("Output validation error")
  })

  test("control: the same named error thrown past the wrapper loses its next: line", async () => {
    const { result, text } = await call("unwrapped", {})
    expect(result.isError).toBe(true)
    expect(text).toBe("No task task_x.")
  })
})
