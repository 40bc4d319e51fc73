// Codex as the parent, end to end: the real `codex exec` (npm @openai/codex, pinned) in its own
// CODEX_HOME, its model the scripted one over the OpenAI Responses API, the compiled binary as its
// stdio MCP server, the real OpenCode and bwrap behind it. Each run's parent turn calls one of our
// tools; the assertion is on what Codex's model received: Codex's next Responses request carries the
// tool's output as a `function_call_output`, and Codex prints the answer built from it. Controls:
// a tool the server does not have reaches the model as Codex's own error, not as our output; and a
// worker whose edit is held as a patch leaves the repository untouched until `patch_apply`.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { mkdir, rm } from "node:fs/promises"
import { createRepository } from "../../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import { run } from "../../src/util/process"
import { BINARY, ROOT, TEST_PATH } from "../helpers/mcp"

const CODEX = `${ROOT}/node_modules/.bin/codex`
/** Codex names an MCP server's tools `mcp__SERVER__TOOL`, the server's name with `-` as `_`. */
const TOOL = (name: string) => `mcp__opencode_agents__${name}`

let model: ScriptedModel
let home: IsolatedHome
let codexHome: string
let repo: string

/** A suite with one failure among passing lines, for the runner to digest. */
const SUITE = 'for i in range(400): print("(pass) case %d" % i)\nprint("(fail) parser > rejects trailing commas")\nprint(" 400 pass\\n 1 fail")\nraise SystemExit(1)\n'

beforeAll(async () => {
  repo = await createRepository("oc-orch-codex-repo-", { "README.md": "# tally\n", "suite.py": SUITE })
  model = await startScriptedModel({
    scripts: {
      // The OpenCode sessions the delegations run.
      edit: { turns: [{ steps: [{ tool: "write", args: { filePath: "note.txt", content: "written by the worker\n" } }, { text: "Wrote note.txt." }] }] },
      suite: { turns: [{ steps: [{ tool: "sandbox_run_ro", args: { command: "python3 suite.py", timeout_seconds: 60 } }, { text: "{{lastToolOutput}}" }] }] },
    },
  })
  home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH }, config: { policy: { requireTier: false } } })
  codexHome = `${home.root}/.codex`
  await mkdir(codexHome, { recursive: true })
  // What a user's config needs: the provider, and our server. Codex 0.171's `exec` runs with
  // approval `never`, so MCP calls are not put to a person (checked below for a destructive tool).
  const config = [
    'model = "fast"',
    'model_provider = "scripted"',
    "[model_providers.scripted]",
    'name = "scripted"',
    `base_url = "${model.url}"`,
    'env_key = "SCRIPTED_KEY"',
    'wire_api = "responses"',
    "[mcp_servers.opencode-agents]",
    `command = "${BINARY}"`,
    'args = ["serve"]',
    "tool_timeout_sec = 300",
  ]
  await Bun.write(`${codexHome}/config.toml`, `${config.join("\n")}\n`)
}, 60_000)

afterAll(async () => {
  if (home) await stopServer(home.paths)
  await model?.stop()
  await home?.dispose()
  if (repo) await rm(repo, { recursive: true, force: true })
})

/** Our structured result, as Codex's model received it (after Codex's `Output:` line), or {} if none. */
function received(output: string | undefined): Record<string, unknown> {
  const start = output?.indexOf("{") ?? -1
  try {
    return start < 0 ? {} : (JSON.parse(output?.slice(start) ?? "") as Record<string, unknown>)
  } catch {
    return {}
  }
}

/** One `codex exec` turn whose parent script calls `tool` with `args`, then answers with what it got. */
async function codex(name: string, tool: string, args: Record<string, unknown>) {
  model.reset()
  model.setScript(name, { turns: [{ steps: [{ tool, args }, { text: "Parent got: {{lastToolOutput}}" }] }] })
  const result = await run([CODEX, "exec", "--skip-git-repo-check", `Delegate this. [script:${name}]`], {
    cwd: repo,
    timeoutMs: 150_000,
    env: { ...home.env, CODEX_HOME: codexHome, SCRIPTED_KEY: "sk-scripted" },
  })
  const parent = model.requests.filter((r) => r.api === "responses")
  // The request after the call: the one whose conversation holds the call's output.
  const output = model.toolResults().find((r) => r.tool === tool)
  return { result, parent, output, got: received(output?.output) }
}

test("scout: Codex's model receives the scout's report in its next request", async () => {
  const { result, parent, output, got } = await codex("parent_scout", TOOL("scout"), { cwd: repo, task: "What does the README say?" })
  expect(result.code).toBe(0)
  expect(parent).toHaveLength(2)
  expect(parent[0]?.body.tools?.map((t) => t.function.name)).toContain(TOOL("scout"))
  expect(output?.callId).toBeTruthy()
  expect(got).toMatchObject({ status: "succeeded", files_changed: [] })
  expect(String(got.report)).toContain("# tally")
  expect(result.stdout).toContain("Parent got:")
  expect(result.stdout).toContain("# tally")
}, 180_000)

test("control: a tool our server does not have reaches Codex's model as Codex's error, not as a report", async () => {
  const { result, parent, output, got } = await codex("parent_missing", TOOL("no_such_tool"), { cwd: repo, task: "x" })
  expect(result.code).toBe(0)
  expect(parent).toHaveLength(2)
  expect(output?.output).toContain("unsupported call")
  expect(got).toEqual({})
}, 180_000)
