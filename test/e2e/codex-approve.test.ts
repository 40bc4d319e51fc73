// `install --codex-approve` lets the real `codex exec` (npm @openai/codex 0.171, offline on the
// scripted Responses API) run our tools without a prompt per call: it writes
// `default_tools_approval_mode = "approve"` into our `[mcp_servers.opencode-agents]` table, for every
// tool of the server (new ones included), not a list that goes stale. Codex 0.171 asks before a call
// to a tool whose annotations say it may write and is destructive or open-world, and `exec` (approval
// `never`) refuses it. Control: the plain install (what a user gets without agreeing) leaves every such
// tool refused before our server sees it, while `delegate_parallel` (non-destructive, closed-world)
// runs either way. After `--codex-approve` each of them reaches our server, and a worker's edit lands.
// The install is the real one, in an isolated home, registering the installed binary.
import { describe, expect, test } from "bun:test"
import { readFlags } from "../../src/config/flags"
import { clientHomes } from "../../src/install/homes"
import { install, type InstallOptions } from "../../src/install/install"
import { LAUNCHERS } from "../../src/sandbox"
import { run } from "../../src/util/process"
import { BINARY, ROOT } from "../helpers/mcp"
import { codexExec, codexWorld, scriptedProvider, TOOL, writing } from "./_codex"

const REFUSED = "MCP tool call requires approval, but approval policy is never"

const world = codexWorld({
  prefix: "oc-orch-codex-approve-",
  files: { "README.md": "# tally\n" },
  scripts: () => ({
    edit: writing("note.txt", "written by the worker\n"),
    look: { turns: [{ steps: [{ tool: "read", args: { filePath: "README.md" } }, { text: "{{lastToolOutput}}" }] }] },
  }),
  home: { config: { policy: { requireTier: false } } },
  // The user's own Codex config before install: its provider (top-level keys, then its table).
  config: scriptedProvider,
})

async function installWith(options: InstallOptions): Promise<string[]> {
  const env = { ...world.home.env, CODEX_HOME: world.codexHome }
  const lines: string[] = []
  const code = await install(
    {
      paths: world.home.paths,
      homes: clientHomes(readFlags(env)),
      env,
      run,
      launchers: LAUNCHERS,
      opencode: `${ROOT}/node_modules/.bin/opencode`,
      binary: BINARY,
      appVersion: "0.0.0-test",
      print: (line) => lines.push(line),
      doctor: async () => 0,
    },
    { integrations: "codex", ...options },
  )
  expect(code).toBe(0)
  return lines
}

/** One `codex exec` turn whose parent script calls `tool` with `args`; what Codex's model got back. */
async function codex(name: string, tool: string, args: Record<string, unknown>) {
  const steps = [{ tool, args }, { text: "Parent got: {{lastToolOutput}}" }]
  const result = await codexExec(world, name, steps)
  expect(result.code).toBe(0)
  return {
    output: world.model.toolResults().find((r) => r.tool === tool)?.output ?? "",
    sessions: world.model.requests.filter((r) => r.api === "chat").length,
  }
}

/** The tools Codex gates, each with arguments our server answers at once (with its own error). */
const GATED: Array<[string, () => Record<string, unknown>]> = [
  ["runner", () => ({ cwd: "/nonexistent-workspace", command: "true", objective: "x" })],
  ["task_continue", () => ({ task_id: "task_none_000", task: "more" })],
  ["task_cancel", () => ({ task_id: "task_none_000" })],
  ["patch_apply", () => ({ patch_id: "patch_none_000", digest: "0".repeat(64), cwd: world.repo })],
  ["patch_discard", () => ({ patch_id: "patch_none_000" })],
]

const parallel = () => ({
  briefs: [{ role: "scout", cwd: world.repo, task: "What does the README say? [script:look]" }],
})
const worker = () => ({ cwd: world.repo, task: "Write the note. [script:edit]" })

describe("Codex approvals written by install", () => {
  test("control: the plain install leaves every gated tool refused by exec; delegate_parallel runs", async () => {
    await installWith({})
    const config = await Bun.file(`${world.codexHome}/config.toml`).text()
    expect(config).toContain("[mcp_servers.opencode-agents]")
    expect(config).not.toContain("default_tools_approval_mode")
    const refused = await codex("plain_worker", TOOL("worker"), worker())
    expect(refused.output).toContain(REFUSED)
    expect(refused.sessions).toBe(0)
    expect(await Bun.file(`${world.repo}/note.txt`).exists()).toBe(false)
    for (const [tool, args] of GATED)
      expect((await codex(`plain_${tool}`, TOOL(tool), args())).output, tool).toContain(REFUSED)
    const fanned = await codex("plain_parallel", TOOL("delegate_parallel"), parallel())
    expect(fanned.output).toContain('"tasks"')
  }, 400_000)

  test("--codex-approve: delegate_parallel and worker run, and Codex's model receives our results", async () => {
    const lines = await installWith({ codexApprove: true })
    expect(lines.join("\n")).toContain("tools approved: no prompt per call")
    const config = await Bun.file(`${world.codexHome}/config.toml`).text()
    expect(config).toContain('default_tools_approval_mode = "approve"')
    expect(config).toContain('model_provider = "scripted"')

    const fanned = await codex("approved_parallel", TOOL("delegate_parallel"), parallel())
    expect(fanned.output).not.toContain(REFUSED)
    expect(fanned.output).toContain('"tasks"')
    expect(fanned.sessions).toBeGreaterThan(0)

    for (const [tool, args] of GATED) {
      const { output } = await codex(`approved_${tool}`, TOOL(tool), args())
      expect(output, tool).not.toContain(REFUSED)
      expect(output, tool).toContain("next")
    }

    const wrote = await codex("approved_worker", TOOL("worker"), worker())
    expect(wrote.output).not.toContain(REFUSED)
    expect(wrote.output).toContain("note.txt")
    expect(await Bun.file(`${world.repo}/note.txt`).text()).toBe("written by the worker\n")

    // A later install without the flag keeps what the user agreed to while the entry has it.
    await installWith({})
    expect(await Bun.file(`${world.codexHome}/config.toml`).text()).toContain('default_tools_approval_mode = "approve"')
  }, 500_000)
})
