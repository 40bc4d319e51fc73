// What the parent pays for our tools in every session, and what it reads first. Claude Code 2.1.332
// (captured offline, fixtures/claude-tools-before.json) sends the model each MCP tool as
// {name: "mcp__<server>__<tool>", description, input_schema} and no output schema; Codex forwards
// no more than that. The size is measured that way, with our registered server name, and held at
// 12 KB; the control is the same measurement of the tools as they were before (> 12 KB, as Claude
// Code really sent them). The server instructions and the orchestrate skill must name every tool
// registered; the control plants a tool in the registry that the text does not name.
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { readFlags } from "../../src/config/flags"
import instructions from "../../src/mcp/instructions.md" with { type: "text" }
import skill from "../../src/templates/skills/orchestrate.md" with { type: "text" }
import { SERVER_NAME } from "../../src/version"
import { tempDir, type TempDir } from "../helpers/temp"
import { clientToolBytes, listOurTools, unnamedTools } from "./_surface"

const LIMIT = 12_000
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
