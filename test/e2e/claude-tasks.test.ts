// What the real Claude Code 2.1.332 (`claude -p`, offline on the scripted Anthropic API) does with our
// native MCP tasks: the compiled binary declares them, Claude Code's requests to it are logged on the
// way in (a `tee` in front of `serve`). It probes `server/discover` (protocol 2026-07-28) without the
// tasks extension, falls back to `initialize` 2025-11-25 without a `tasks` capability and calls the
// scout without `task`: the scout's result comes back in the call, as before (README "Native MCP
// tasks"). Control: the SDK client declaring tasks through the same logging path is seen sending one.
import { expect, test } from "bun:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { chmod, rm } from "node:fs/promises"
import { BINARY } from "../helpers/mcp"
import { claudePrint, claudeWorld } from "./_claude-print"

interface Message {
  id?: number | string
  method?: string
  params?: { _meta?: Record<string, unknown>; capabilities?: Record<string, unknown>; task?: unknown; name?: string }
}

const world = claudeWorld({
  files: { "README.md": "# tally\n" },
  scripts: (repo) => ({
    answer: { turns: [{ steps: [{ text: "tally is in README.md" }] }] },
    parent: {
      turns: [
        {
          steps: [
            { tool: "mcp__orch__scout", args: { cwd: repo, task: "Where is tally? [script:answer]" } },
            { text: "Scout said: {{lastToolOutput}}" },
          ],
        },
      ],
    },
  }),
  // What the client sends is appended to the log on its way to serve; serve's answers go straight back.
  server: async ({ home }) => {
    const logged = `${home.root}/logged-serve.sh`
    await Bun.write(logged, `#!/bin/sh\ntee -a '${wire()}' | '${BINARY}' serve\n`)
    await chmod(logged, 0o755)
    return { command: logged, args: [] }
  },
})
const wire = () => `${world.home.root}/wire.jsonl`

async function sent(): Promise<Message[]> {
  const file = Bun.file(wire())
  if (!(await file.exists())) return []
  return (await file.text())
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Message)
}

async function claude(env: Record<string, string> = {}) {
  await rm(wire(), { force: true })
  const result = await claudePrint(world, [], env)
  const messages = await sent()
  const scout = world.model.toolResults().find((r) => r.tool === "mcp__orch__scout")
  return {
    result,
    discover: messages.find((m) => m.method === "server/discover"),
    initialize: messages.find((m) => m.method === "initialize"),
    calls: messages.filter((m) => m.method === "tools/call"),
    polled: messages.filter((m) => m.method?.startsWith("tasks/")),
    scout: JSON.parse(scout?.output ?? "{}") as { status?: string; report?: string },
    parentTools: world.model.toolResults().map((r) => r.tool),
  }
}

test.each([
  ["as shipped", {}],
  ["control: CLAUDE_CODE_DISABLE_MCP_TASKS=1", { CLAUDE_CODE_DISABLE_MCP_TASKS: "1" }],
])(
  "Claude Code in print mode (%s) declares no tasks to a server offering them, and calls the scout plainly",
  async (_, env) => {
    const { result, discover, initialize, calls, polled, scout, parentTools } = await claude(env)
    expect(result.code).toBe(0)
    // The 2026-07-28 probe, where the extension would be declared; print mode leaves it out.
    const probed = discover?.params?._meta?.["io.modelcontextprotocol/clientCapabilities"] as Record<string, unknown>
    expect(discover?.params?._meta?.["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28")
    expect(probed).toBeDefined()
    expect(probed.extensions).toBeUndefined()
    expect(initialize?.params?.capabilities).toBeDefined()
    expect(initialize?.params?.capabilities?.tasks).toBeUndefined()
    expect(calls.map((call) => [call.params?.name, call.params?.task])).toEqual([["scout", undefined]])
    expect(polled).toEqual([])
    // The scout's result came back in the call itself; the parent model called nothing else.
    expect(scout).toMatchObject({ status: "succeeded", report: "tally is in README.md" })
    expect(parentTools.filter((tool) => tool.startsWith("mcp__"))).toEqual(["mcp__orch__scout"])
    expect(result.stdout).toContain("tally is in README.md")
  },
  120_000,
)

test("control: a client that declares tasks, through the same logging path, is seen sending one", async () => {
  await rm(wire(), { force: true })
  const transport = new StdioClientTransport({
    command: `${world.home.root}/logged-serve.sh`,
    env: world.home.env as Record<string, string>,
    stderr: "pipe",
  })
  const client = new Client({ name: "orchestrator-tests", version: "1" }, { capabilities: { tasks: {} } })
  await client.connect(transport)
  try {
    const params = {
      name: "scout",
      arguments: { cwd: world.repo, task: "Where? [script:answer]" },
      task: { ttl: 60_000 },
    }
    const { task } = await client.request({ method: "tools/call", params }, CreateTaskResultSchema)
    await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 60_000 })
  } finally {
    await client.close()
  }
  const messages = await sent()
  expect(messages.find((m) => m.method === "initialize")?.params?.capabilities?.tasks).toEqual({})
  expect(messages.filter((m) => m.method === "tools/call").map((m) => m.params?.task)).toEqual([{ ttl: 60_000 }])
  expect(messages.some((m) => m.method === "tasks/result")).toBe(true)
}, 120_000)
