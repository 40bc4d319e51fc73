// `install --claude-always-load` writes Claude Code's per-server `alwaysLoad`, and the real Claude Code
// (npm @anthropic-ai/claude-code, offline) then offers our tools to its model up front although its tool
// search is on (the default). Control: the plain install leaves the entry without it, and the same
// Claude Code defers our tools behind ToolSearch. What Claude Code offers is read from the Messages
// request it sends to a recording endpoint on 127.0.0.1, which refuses every request (no model runs).
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { run } from "../../src/util/process"
import { BIN, installYes, machine, type Machine } from "./helpers"

interface Sent {
  tools?: Array<{ name: string }>
}

let bodies: Sent[] = []
let endpoint: ReturnType<typeof Bun.serve>

beforeAll(() => {
  endpoint = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if (new URL(request.url).pathname.endsWith("/messages")) bodies.push((await request.json()) as Sent)
      return Response.json(
        { type: "error", error: { type: "invalid_request_error", message: "recorded, not answered" } },
        { status: 400 },
      )
    },
  })
})

afterAll(() => endpoint?.stop(true))

/** The tool names of Claude Code's first request that had its tool search on. */
async function offered(m: Machine): Promise<string[]> {
  bodies = []
  const env = {
    ...m.env,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${endpoint.port}`,
    ANTHROPIC_API_KEY: "sk-recorded",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  }
  await run([`${BIN}/claude`, "-p", "investigate the codebase", "--model", "claude-opus-4-5"], {
    cwd: m.home,
    env,
    timeoutMs: 90_000,
  })
  const searching = bodies.find((body) => body.tools?.some((tool) => tool.name === "ToolSearch"))
  expect(searching).toBeDefined()
  return (searching?.tools ?? []).map((tool) => tool.name)
}

const ours = (names: string[]) => names.filter((name) => name.startsWith("mcp__opencode-agents__"))
const entryOf = async (m: Machine) =>
  (await Bun.file(`${m.env.CLAUDE_CONFIG_DIR}/.claude.json`).json()).mcpServers["opencode-agents"]

describe("Claude Code's alwaysLoad, set by install only when asked", () => {
  test("control: a plain install leaves alwaysLoad out, and Claude Code defers our tools behind its tool search", async () => {
    using m = machine()
    expect((await installYes(m, { integrations: "claude" })).code).toBe(0)
    expect(await entryOf(m)).not.toHaveProperty("alwaysLoad")
    expect(ours(await offered(m))).toEqual([])
  }, 180_000)

  test("--claude-always-load writes it, Claude Code offers every tool up front, and a rerun without the flag keeps it", async () => {
    using m = machine()
    const first = await installYes(m, { integrations: "claude", claudeAlwaysLoad: true })
    expect(first.code).toBe(0)
    expect(first.lines.join("\n")).toContain("alwaysLoad: tools up front")
    expect(await entryOf(m)).toMatchObject({ type: "stdio", args: ["serve"], alwaysLoad: true })
    const names = ours(await offered(m))
    expect(names).toContain("mcp__opencode-agents__scout")
    expect(names).toContain("mcp__opencode-agents__patch_discard")
    expect(names.length).toBeGreaterThanOrEqual(17)

    const again = await installYes(m, { integrations: "claude" })
    expect(again.code).toBe(0)
    expect(again.lines).toContain("  keep     Claude Code MCP server opencode-agents (already registered)")
    expect(await entryOf(m)).toMatchObject({ alwaysLoad: true })
  }, 180_000)
})
