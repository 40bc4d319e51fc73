// What the real Claude Code 2.1.332 (`claude -p`, offline on the scripted Anthropic API) does with the tasks
// extension (`io.modelcontextprotocol/tasks`, protocol 2026-07-28) that the compiled binary offers; what
// Claude Code sends is logged on the way in (a `tee` in front of `serve`), what serve answers on the way
// out. Print mode opens 2026-07-28 with `server/discover` without declaring the extension, so it calls the
// scout plainly: the scout's result comes back in the call, as before (docs/clients.md). With
// MCP_PROTOCOL_NEGOTIATION=legacy it opens with `initialize` 2025-11-25 (no `tasks` capability) and the same
// holds. Interactive Claude Code declares the extension and polls tasks/get:
// test/e2e/claude-native-tasks.test.ts. Control: a client declaring the extension on 2026-07-28, through the
// same logging path, gets the long scout back as a task and is seen polling tasks/get.
import { expect, test } from "bun:test"
import { CreateTaskResultV2Schema, GetTaskResultV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2"
import { rm } from "node:fs/promises"
import { claudePrint, claudeWorld } from "./_claude-print"
import { loggedLines, loggedServe } from "./_wire"

interface Message {
  id?: number | string
  method?: string
  params?: { _meta?: Record<string, unknown>; capabilities?: Record<string, unknown>; task?: unknown; name?: string }
}
interface Answer {
  id?: number | string
  result?: Record<string, unknown>
  error?: { code: number; message: string }
}

const world = claudeWorld({
  files: { "README.md": "# tally\n" },
  scripts: (repo) => ({
    answer: { turns: [{ steps: [{ text: "tally is in README.md" }] }] },
    // The same answer, well past a one-second sync budget.
    late: { turns: [{ steps: [{ text: "tally is in README.md", delayMs: 4000 }] }] },
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
  // What the client sends is appended to one log on its way to serve; serve's answers to another on their way back.
  server: async ({ home }) => {
    const logged = await loggedServe(`${home.root}/logged-serve.sh`, { sent: wire(), answered: answers() })
    return { command: logged, args: [] }
  },
})
const wire = () => `${world.home.root}/wire.jsonl`
const answers = () => `${world.home.root}/answers.jsonl`

const sent = () => loggedLines<Message>(wire())

async function claude(env: Record<string, string> = {}) {
  await Promise.all([rm(wire(), { force: true }), rm(answers(), { force: true })])
  const result = await claudePrint(world, [], env)
  const messages = await sent()
  const scout = world.model.toolResults().find((r) => r.tool === "mcp__orch__scout")
  const discover = messages.find((m) => m.method === "server/discover")
  return {
    result,
    discover,
    probed: (await loggedLines<Answer>(answers())).find((answer) => discover && answer.id === discover.id),
    initialize: messages.find((m) => m.method === "initialize"),
    calls: messages.filter((m) => m.method === "tools/call"),
    polled: messages.filter((m) => m.method?.startsWith("tasks/")),
    scout: JSON.parse(scout?.output ?? "{}") as { status?: string; report?: string },
    parentTools: world.model.toolResults().map((r) => r.tool),
  }
}

test.each([
  ["as shipped: 2026-07-28", {}],
  ["control: MCP_PROTOCOL_NEGOTIATION=legacy: 2025-11-25", { MCP_PROTOCOL_NEGOTIATION: "legacy" }],
])(
  "Claude Code in print mode (%s) declares no tasks to a server offering them, and calls the scout plainly",
  async (_, env) => {
    const { result, discover, probed, initialize, calls, polled, scout, parentTools } = await claude(env)
    expect(result.code).toBe(0)
    if ("MCP_PROTOCOL_NEGOTIATION" in env) {
      expect(discover).toBeUndefined()
      expect(initialize?.params).toMatchObject({ protocolVersion: "2025-11-25" })
      expect(initialize?.params?.capabilities).toBeDefined()
      expect(initialize?.params?.capabilities?.tasks).toBeUndefined()
    } else {
      // The 2026-07-28 opening, where the extension would be declared; print mode leaves it out.
      const declared = discover?.params?._meta?.["io.modelcontextprotocol/clientCapabilities"] as Record<
        string,
        unknown
      >
      expect(discover?.params?._meta?.["io.modelcontextprotocol/protocolVersion"]).toBe("2026-07-28")
      expect(declared).toBeDefined()
      expect(declared.extensions).toBeUndefined()
      expect(probed?.result?.supportedVersions).toContain("2026-07-28")
      expect(initialize).toBeUndefined()
    }
    expect(calls.map((call) => [call.params?.name, call.params?.task])).toEqual([["scout", undefined]])
    expect(polled).toEqual([])
    // The scout's result came back in the call itself; the parent model called nothing else.
    expect(scout).toMatchObject({ status: "succeeded", report: "tally is in README.md" })
    expect(parentTools.filter((tool) => tool.startsWith("mcp__"))).toEqual(["mcp__orch__scout"])
    expect(result.stdout).toContain("tally is in README.md")
  },
  120_000,
)

const TASKS = "io.modelcontextprotocol/tasks"
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "orchestrator-tests", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
}

/**
 * A 2026-07-28 client declaring the tasks extension, in raw lines through the logging path (the SDK's Client takes
 * no `resultType: "task"` answer); the server behind a one-second sync budget.
 */
function declaring() {
  const proc = Bun.spawn([`${world.home.root}/logged-serve.sh`], {
    env: { ...world.home.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" } as Record<string, string>,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  })
  type Frame = { id?: number; result?: Record<string, unknown>; error?: { message: string } }
  const waiting = new Map<number, (frame: Frame) => void>()
  void (async () => {
    let buffer = ""
    const decoder = new TextDecoder()
    for await (const chunk of proc.stdout) {
      buffer += decoder.decode(chunk, { stream: true })
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines.filter((line) => line.trim())) {
        const frame = JSON.parse(line) as Frame
        if (typeof frame.id === "number") waiting.get(frame.id)?.(frame)
      }
    }
  })()
  let next = 0
  const request = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = ++next
      waiting.set(id, (frame) => (frame.error ? reject(new Error(frame.error.message)) : resolve(frame.result!)))
      proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: ENVELOPE } })}\n`)
      void proc.stdin.flush()
    })
  return {
    request,
    close: async () => {
      proc.stdin.end()
      await proc.exited
    },
  }
}

test("control: a client that declares the tasks extension, through the same logging path, is seen polling tasks/get", async () => {
  await Promise.all([rm(wire(), { force: true }), rm(answers(), { force: true })])
  const client = declaring()
  try {
    expect((await client.request("server/discover")).supportedVersions).toContain("2026-07-28")
    const params = { name: "scout", arguments: { cwd: world.repo, task: "Where? [script:late]" } }
    const task = CreateTaskResultV2Schema.parse(await client.request("tools/call", params))
    let polled = GetTaskResultV2Schema.parse(await client.request("tasks/get", { taskId: task.taskId }))
    while (polled.status === "working") {
      await Bun.sleep(polled.pollIntervalMs ?? 1000)
      polled = GetTaskResultV2Schema.parse(await client.request("tasks/get", { taskId: task.taskId }))
    }
    expect(polled.status).toBe("completed")
    if (polled.status === "completed")
      expect(polled.result.structuredContent).toMatchObject({ status: "succeeded", report: "tally is in README.md" })
  } finally {
    await client.close()
  }
  const messages = await sent()
  const declared = messages.find((m) => m.method === "server/discover")?.params?._meta?.[
    "io.modelcontextprotocol/clientCapabilities"
  ] as { extensions?: Record<string, unknown> } | undefined
  expect(declared?.extensions).toEqual({ [TASKS]: {} })
  expect(messages.some((m) => m.method === "initialize")).toBe(false)
  expect(messages.filter((m) => m.method === "tools/call").map((m) => [m.params?.name, m.params?.task])).toEqual([
    ["scout", undefined],
  ])
  expect(messages.some((m) => m.method === "tasks/get")).toBe(true)
}, 120_000)
