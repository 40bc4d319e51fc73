// What the parent pays for our tools in every session, and what it reads first. Claude Code 2.1.332
// (captured offline, fixtures/claude-tools-before.json) sends the model each MCP tool as
// {name: "mcp__<server>__<tool>", description, input_schema} and no output schema; Codex forwards
// no more than that. The size is measured that way, with our registered server name, and held at
// 12 KB; the control is the same measurement of the tools as they were before (> 12 KB, as Claude
// Code really sent them). The server instructions and the orchestrate skill must name every tool
// registered; the control plants a tool in the registry that the text does not name.
import type { CallToolResult, Tool } from "@modelcontextprotocol/client"
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { readFlags } from "../../src/config/flags"
import instructions from "../../src/mcp/instructions.md" with { type: "text" }
import skill from "../../src/templates/skills/orchestrate.md" with { type: "text" }
import { SERVER_NAME } from "../../src/version"
import { tempDir, type TempDir } from "../helpers/temp"
import { clientToolBytes, listOurTools, surfaceBytes, unnamedTools, withOurClient } from "./_surface"

const LIMIT = 12_000
/** The tools and the server instructions together, as one JSON value (`surfaceBytes`). */
const SURFACE_LIMIT = 12_288
let home: TempDir
let tools: Tool[]
/** The tools as Claude Code sent them before: name, description, input_schema. */
let before: { tools: { name: string; description: string; input_schema: Tool["inputSchema"] }[] }

beforeAll(async () => {
  home = await tempDir("oc-orch-surface-")
  before = await Bun.file(`${import.meta.dir}/fixtures/claude-tools-before.json`).json()
  tools = await listOurTools(readFlags({ HOME: home.path, PATH: "/usr/bin:/bin" }))
})

afterAll(async () => {
  await home?.[Symbol.asyncDispose]()
})

describe("the tool surface as a client hands it to the model", () => {
  test("is at most 12 KB with our server name, and every tool still declares an output schema", () => {
    expect(clientToolBytes(tools, SERVER_NAME)).toBeLessThanOrEqual(LIMIT)
    for (const tool of tools) {
      expect(tool.description?.length ?? 0).toBeGreaterThan(40)
      expect(tool.outputSchema?.type).toBe("object")
    }
  })

  test("control: the surface before, as Claude Code sent it, measures over 12 KB the same way", () => {
    const captured: Tool[] = before.tools.map((tool) => ({
      name: tool.name.replace(/^mcp__orch__/, ""),
      description: tool.description,
      inputSchema: tool.input_schema,
    }))
    // The measurement reproduces Claude Code's own bytes for the captured request (server "orch").
    expect(clientToolBytes(captured, "orch")).toBe(Buffer.byteLength(JSON.stringify(before.tools)))
    expect(clientToolBytes(captured, SERVER_NAME)).toBeGreaterThan(LIMIT)
    // Every tool and argument still there: the smaller surface lost none (tools and optional arguments added
    // since may join).
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(captured.map((tool) => tool.name)))
    for (const old of captured) {
      const now = tools.find((tool) => tool.name === old.name)!
      expect(Object.keys(now.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(Object.keys(old.inputSchema.properties ?? {})),
      )
      expect(now.inputSchema.required ?? []).toEqual(old.inputSchema.required ?? [])
    }
  })
})

describe("the tools and the instructions together", () => {
  test("are at most 12,288 bytes as one JSON value, every tool and argument kept", async () => {
    expect(surfaceBytes(tools, instructions)).toBeLessThanOrEqual(SURFACE_LIMIT)
    const before: { tools: Tool[] } = await Bun.file(`${import.meta.dir}/fixtures/tools-list-before.json`).json()
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(before.tools.map((tool) => tool.name)))
    for (const old of before.tools) {
      const now = tools.find((tool) => tool.name === old.name)!
      expect(Object.keys(now.inputSchema.properties ?? {})).toEqual(
        expect.arrayContaining(Object.keys(old.inputSchema.properties ?? {})),
      )
    }
  })

  test("an empty required string is still refused by the call, though the listing leaves out minLength", async () => {
    const flags = readFlags({ HOME: home.path, PATH: "/usr/bin:/bin" })
    const answers = await withOurClient(flags, async (client) => ({
      empty: (await client.callTool({ name: "scout", arguments: { cwd: home.path, task: "" } })) as CallToolResult,
      // Control: the same call with the task missing altogether, refused the same way, by the same check.
      missing: (await client.callTool({ name: "scout", arguments: { cwd: home.path } })) as CallToolResult,
    }))
    for (const result of [answers.empty, answers.missing]) expect(result.isError).toBe(true)
    const said = (result: CallToolResult) => (result.content[0]?.type === "text" ? result.content[0].text : "")
    expect(said(answers.empty)).toContain("task")
    expect(said(answers.empty)).not.toBe(said(answers.missing))
  })

  test("control: the list before empty-string bounds left the listing measures over the limit", async () => {
    const before: { tools: Tool[] } = await Bun.file(`${import.meta.dir}/fixtures/tools-list-before.json`).json()
    expect(surfaceBytes(before.tools, instructions)).toBeGreaterThan(SURFACE_LIMIT)
  })
})

describe("the guidance a parent reads first names every registered tool", () => {
  test("the server instructions and the orchestrate skill each name every tool", () => {
    expect(tools.length).toBeGreaterThanOrEqual(17)
    expect(unnamedTools(instructions, tools)).toEqual([])
    expect(unnamedTools(skill, tools)).toEqual([])
  })

  test("control: a tool added to the registry but not to the text is caught in both", () => {
    const planted = [...tools, { name: "patch_rebase", inputSchema: { type: "object" } } as Tool]
    expect(unnamedTools(instructions, planted)).toEqual(["patch_rebase"])
    expect(unnamedTools(skill, planted)).toEqual(["patch_rebase"])
  })

  test("both say when to use tier, policy and isolation, and to discard a patch once applied", () => {
    for (const text of [instructions, skill]) {
      expect(text).toContain("`tier`")
      expect(text).toContain('`isolation: "worktree"`')
      expect(text).toMatch(/patch_discard[^.]*after[^.]*patch_apply|after[^.]*patch_apply[^.]*patch_discard/)
      expect(text).toContain("ENABLE_TOOL_SEARCH")
    }
  })
})
