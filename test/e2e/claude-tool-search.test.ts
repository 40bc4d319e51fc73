// Claude Code (npm @anthropic-ai/claude-code) with its tool search on, the default: our tools are
// deferred, so the parent finds them only by searching. Its model is the scripted one over the
// Anthropic Messages API, our compiled binary its stdio MCP server. A parent turn searches with the
// words a user would use, and the next step calls the tool that should match. Which tools the search
// loaded is read from the tools array of Claude Code's next request; that the call reached our server
// is read from its answer (a relative `cwd` gets our own refusal, so no OpenCode session is needed).
// Control: a search in other words loads none of ours (so "loads" can fail). Claude Code 2.1.332 passes
// a call to a tool not yet loaded through anyway, with its schema appended, so the call is no control.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdir } from "node:fs/promises"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { writeJson } from "../../src/util/fs"
import { run } from "../../src/util/process"
import { tempDir, type TempDir } from "../helpers/temp"
import { BINARY, ROOT, TEST_PATH } from "../helpers/mcp"

const CLAUDE = `${ROOT}/node_modules/.bin/claude`
const OURS = "cwd must be an absolute path"
const SEARCHES = [
  { words: "investigate the codebase", tool: "scout", args: { cwd: "repo", task: "Where is count defined?" } },
  { words: "delegate a small change", tool: "worker", args: { cwd: "repo", task: "Rename count to tally." } },
  {
    words: "run the tests and summarise",
    tool: "runner",
    args: { cwd: "repo", command: "bun test", objective: "Do they pass?" },
  },
] as const

// Allowed up front, so a call is stopped only by the tool not being loaded, never by a permission prompt.
const ALLOWED = SEARCHES.map((s) => `mcp__orch__${s.tool}`).join(",")

let model: ScriptedModel
let home: TempDir

beforeAll(async () => {
  const searching = SEARCHES.map((s) => [
    s.tool,
    {
      turns: [
        {
          steps: [
            { tool: "ToolSearch", args: { query: s.words, max_results: 3 } },
            { tool: `mcp__orch__${s.tool}`, args: s.args },
            { text: "{{lastToolOutput}}" },
          ],
        },
      ],
    },
  ])
  model = await startScriptedModel({
    scripts: {
      ...Object.fromEntries(searching),
      elsewhere: {
        turns: [
          { steps: [{ tool: "ToolSearch", args: { query: "schedule a cron job", max_results: 3 } }, { text: "done" }] },
        ],
      },
    },
  })
  home = await tempDir("oc-orch-toolsearch-")
  await mkdir(`${home.path}/.claude`, { recursive: true })
  await writeJson(`${home.path}/mcp.json`, {
    mcpServers: { orch: { type: "stdio", command: BINARY, args: ["serve"] } },
  })
})

afterAll(async () => {
  await model?.stop()
  await home?.[Symbol.asyncDispose]()
})

/** One `claude -p` turn playing `script`; the MCP tools each request offered, and what each call got back. */
async function claude(script: string) {
  model.reset()
  const result = await run(
    [
      CLAUDE,
      "-p",
      `Go. [script:${script}]`,
      "--model",
      "fast",
      "--mcp-config",
      `${home.path}/mcp.json`,
      "--strict-mcp-config",
      "--allowedTools",
      ALLOWED,
    ],
    {
      cwd: home.path,
      timeoutMs: 90_000,
      env: {
        HOME: home.path,
        PATH: TEST_PATH,
        CLAUDE_CONFIG_DIR: `${home.path}/.claude`,
        ANTHROPIC_BASE_URL: model.origin,
        ANTHROPIC_API_KEY: "sk-scripted",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
    },
  )
  const offered = model.requests
    .filter((r) => r.api === "messages")
    .map((r) => (r.body.tools ?? []).map((tool) => tool.function.name))
  return { result, offered, results: model.toolResults() }
}

describe("Claude Code with tool search on finds our tools by a user's words", () => {
  for (const search of SEARCHES) {
    test(`"${search.words}" loads ${search.tool}, and the next step's call reaches our server`, async () => {
      const { result, offered, results } = await claude(search.tool)
      expect(result.code).toBe(0)
      // Deferred at first: ToolSearch is offered, our tool is not.
      expect(offered[0]).toContain("ToolSearch")
      expect(offered[0]).not.toContain(`mcp__orch__${search.tool}`)
      expect(offered.at(-1)).toContain(`mcp__orch__${search.tool}`)
      const call = results.find((r) => r.tool === `mcp__orch__${search.tool}`)
      expect(call?.output).toContain(OURS)
    }, 120_000)
  }

  test("control: a search in other words (a cron job) loads none of our tools", async () => {
    const { offered } = await claude("elsewhere")
    expect(offered.length).toBeGreaterThanOrEqual(2)
    expect(offered.at(-1)!.length).toBeGreaterThan(offered[0]!.length)
    expect(offered.at(-1)!.filter((name) => name.startsWith("mcp__orch__"))).toEqual([])
  }, 120_000)
})
