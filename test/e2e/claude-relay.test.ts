// The permission relay with a real client: Claude Code (npm @anthropic-ai/claude-code, pinned in
// package.json) in print mode, its model the scripted one over the Anthropic Messages API, the
// compiled binary as its stdio MCP server, the real OpenCode behind it. Claude's turn calls `scout`;
// the scout's OpenCode session asks a `question`. Print mode opens revision 2026-07-28 (`server/discover`),
// so the call comes back `input_required` with the form (src/mcp/input-rounds.ts); Claude Code puts it to
// its `Elicitation` hook (a command that stands in for the person,
// https://code.claude.com/docs/en/hooks.md#elicitation) and calls again with the answer. What the hook
// answers is what the OpenCode session receives. Controls: the same hook on 2025-11-25
// (MCP_PROTOCOL_NEGOTIATION=legacy: `initialize`, and the server's own `elicitation/create` mid-call); the
// hook declining, and no hook at all (print mode then answers `cancel`), each reach OpenCode as a dismissed
// question.
import { expect, test } from "bun:test"
import { chmod, rm } from "node:fs/promises"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { readJson, writeJson } from "../../src/util/fs"
import { askingTurns, QUESTION } from "../helpers/question"
import { claudePrint, claudeWorld } from "./_claude-print"
import { loggedLines, loggedServe } from "./_wire"

const ANSWERED = `"${QUESTION.question}"="countWords"`
const NO_ANSWER = "No answer from the person; reporting without one."

const world = claudeWorld({
  files: {
    "README.md": "# tally\n",
    "src/tally.ts": "export const count = (words: string[]) => words.length\n",
  },
  scripts: (repo) => ({
    // The OpenCode scout: asks, then reports what the question tool returned.
    ask: { turns: askingTurns(NO_ANSWER) },
    // Claude Code's own turn: delegate to the scout, then say what it returned.
    parent: {
      turns: [
        {
          steps: [
            { tool: "mcp__orch__scout", args: { cwd: repo, task: "Find out what is needed. [script:ask]" } },
            { text: "Scout said: {{lastToolOutput}}" },
          ],
        },
      ],
    },
  }),
  // A cancelled form dismisses the question at once here, as before task_respond (test/mcp/respond.test.ts).
  home: { config: { policy: { requireTier: false, relay: ["question"], respondWaitSeconds: 0 } } },
  // What Claude Code sends is appended to a log on its way to serve.
  server: async ({ home }) => {
    const logged = await loggedServe(`${home.root}/logged-serve.sh`, { sent: `${home.root}/wire.jsonl` })
    return { command: logged, args: [] }
  },
})

/** Settings whose Elicitation hook for our server records what it was asked and prints `answer`. */
async function hookSettings(answer: Record<string, unknown>): Promise<string> {
  const { home } = world
  const script = `${home.root}/hook.sh`
  const output = JSON.stringify({ hookSpecificOutput: { hookEventName: "Elicitation", ...answer } })
  await Bun.write(script, `#!/bin/sh\ncat > "${home.root}/asked.json"\nprintf '%s\\n' '${output}'\n`)
  await chmod(script, 0o755)
  const settings = `${home.root}/settings.json`
  await writeJson(settings, {
    hooks: { Elicitation: [{ matcher: "orch", hooks: [{ type: "command", command: script }] }] },
  })
  return settings
}

/** One `claude -p` turn; returns what it printed, the scout's task record and the tool results the scripted model saw. */
async function claude(settings?: string, env: Record<string, string> = {}) {
  const { model, home } = world
  await rm(`${home.root}/asked.json`, { force: true })
  await rm(`${home.root}/wire.jsonl`, { force: true })
  const result = await claudePrint(world, settings ? ["--settings", settings] : [], env)
  const scouted = model.toolResults().find((r) => r.tool === "mcp__orch__scout")
  const scout = JSON.parse(scouted?.output ?? "{}") as { status?: string; task_id?: string; report?: string }
  const record = scout.task_id ? await readJson<TaskRecord>(`${home.paths.tasksDir}/${scout.task_id}.json`) : undefined
  const question = model.toolResults().find((r) => r.tool === "question")
  const asked = await readJson<Record<string, unknown>>(`${home.root}/asked.json`)
  const sent = await loggedLines<{ method?: string; params?: Record<string, unknown> }>(`${home.root}/wire.jsonl`)
  return { result, scout, progress: record?.progress ?? [], question, asked, sent }
}

test.each([
  ["2026-07-28: input_required rounds", {}],
  [
    "control: 2025-11-25 with MCP_PROTOCOL_NEGOTIATION=legacy: elicitation/create",
    { MCP_PROTOCOL_NEGOTIATION: "legacy" },
  ],
])(
  "Claude Code's Elicitation hook answers the scout's question (%s), and the OpenCode session receives it",
  async (_, env) => {
    const settings = await hookSettings({ action: "accept", content: { q1: "countWords" } })
    const { result, scout, progress, question, asked, sent } = await claude(settings, env)
    const calls = sent.filter((message) => message.method === "tools/call")
    if ("MCP_PROTOCOL_NEGOTIATION" in env) {
      // One call: the answer came as the reply to the server's own request in the middle of it.
      expect(sent.find((message) => message.method === "initialize")?.params?.protocolVersion).toBe("2025-11-25")
      expect(calls).toHaveLength(1)
    } else {
      // Two rounds of one call: the second carries the hook's answer and the sealed state.
      expect(sent.some((message) => message.method === "server/discover")).toBe(true)
      expect(sent.some((message) => message.method === "initialize")).toBe(false)
      expect(calls).toHaveLength(2)
      expect(typeof calls[1]?.params?.requestState).toBe("string")
      expect(Object.values(calls[1]?.params?.inputResponses as Record<string, unknown>)).toEqual([
        { action: "accept", content: { q1: "countWords" } },
      ])
    }
    expect(result.code).toBe(0)
    // Claude's model was offered our tool and called it; the call went through Claude's MCP client.
    const offered = world.model.requests
      .find((r) => r.api === "messages")
      ?.body.tools?.map((tool) => tool.function.name)
    expect(offered).toContain("mcp__orch__scout")
    // What our server asked, as the hook received it from Claude Code.
    expect(asked).toMatchObject({
      hook_event_name: "Elicitation",
      mcp_server_name: "orch",
      mode: "form",
      message: `A delegated OpenCode agent asks: ${QUESTION.question}`,
      requested_schema: {
        type: "object",
        properties: { q1: { type: "string", title: "Name", enum: ["countWords", "tally"] } },
        required: ["q1"],
      },
    })
    expect(progress).toContain(`asked the person: ${QUESTION.question}`)
    expect(progress).toContain("the person answered: countWords")
    // OpenCode's question tool returned the hook's answer to the scout's model…
    expect(question?.output).toContain(ANSWERED)
    // …the scout's report carries it back to Claude's model, and Claude prints it.
    expect(scout.status).toBe("succeeded")
    expect(scout.report).toContain(ANSWERED)
    expect(result.stdout).toContain("Scout said:")
    expect(result.stdout).toContain("countWords")
  },
  120_000,
)

test("control: the hook declines, and the question reaches OpenCode dismissed, with no answer", async () => {
  const settings = await hookSettings({ action: "decline" })
  const { result, scout, progress, question, asked } = await claude(settings)
  expect(result.code).toBe(0)
  expect(asked).toMatchObject({ hook_event_name: "Elicitation", mcp_server_name: "orch" })
  expect(progress).toContain(`refused a question request (${QUESTION.question}): the person declined`)
  expect(question?.output).toBe("The user dismissed this question")
  expect(scout.report).toBe(NO_ANSWER)
  expect(result.stdout).not.toContain("countWords")
}, 120_000)

test("control: without a hook, print mode answers cancel: the ask reaches Claude Code, no one answers it", async () => {
  const { result, scout, progress, question, asked } = await claude()
  expect(result.code).toBe(0)
  expect(asked).toBeUndefined()
  expect(progress).toContain(`asked the person: ${QUESTION.question}`)
  expect(progress).toContain(`refused a question request (${QUESTION.question}): the person dismissed the ask`)
  expect(question?.output).toBe("The user dismissed this question")
  expect(scout.report).toBe(NO_ANSWER)
}, 120_000)
