// Codex as the parent, end to end: the real `codex exec` (npm @openai/codex, pinned) in its own
// CODEX_HOME, its model the scripted one over the OpenAI Responses API, the compiled binary as its
// stdio MCP server, the real OpenCode and bwrap behind it. Each run's parent turn calls one of our
// tools; the assertion is on what Codex's model received: Codex's next Responses request carries the
// tool's output as a `function_call_output`, and Codex prints the answer built from it. Controls:
// a tool the server does not have reaches the model as Codex's own error, not as our output; a
// worker without its `approval_mode = "approve"` is refused by `exec` and writes nothing; and a
// worker whose edit is held as a patch leaves the repository untouched until `patch_apply`.
import { expect, test } from "bun:test"
import { codexCall, codexWorld, ourServer, scriptedProvider, TOOL, writing } from "./_codex"

/**
 * Our tools Codex would put to a person (not read-only, destructive or open-world by their
 * annotations), approved once in the config so `exec` runs them: what a user's config needs.
 */
const APPROVED = ["worker", "runner", "task_continue", "task_cancel", "patch_apply", "patch_discard"]

/** A suite with one failure among passing lines, for the runner to digest. */
const SUITE =
  'for i in range(400): print("(pass) case %d" % i)\nprint("(fail) parser > rejects trailing commas")\nprint(" 400 pass\\n 1 fail")\nraise SystemExit(1)\n'

const world = codexWorld({
  files: { "README.md": "# tally\n", "suite.py": SUITE },
  // The OpenCode sessions the delegations run.
  scripts: () => ({
    edit: writing("note.txt", "written by the worker\n"),
    held: writing("held.txt", "held as a patch\n"),
    suite: {
      turns: [
        {
          steps: [
            { tool: "sandbox_run_ro", args: { command: "python3 suite.py", timeout_seconds: 60 } },
            { text: "{{lastToolOutput}}" },
          ],
        },
      ],
    },
  }),
  home: { config: { policy: { requireTier: false } } },
  // What a user's config needs: the provider, and our server. Codex 0.171's `exec` runs with
  // approval `never`, so MCP calls are not put to a person (checked below for a destructive tool).
  config: (modelUrl) => [
    ...scriptedProvider(modelUrl),
    ...ourServer(300),
    // Codex 0.171 asks before a call to a tool not marked read-only and non-destructive, and `exec`
    // (approval `never`) refuses it. These are the tools a delegation needs without a prompt per call.
    ...APPROVED.flatMap((tool) => [`[mcp_servers.opencode-agents.tools.${tool}]`, 'approval_mode = "approve"']),
  ],
})

/** One `codex exec` turn whose parent script calls `tool` with `args`, then answers with what it got. */
const codex = (name: string, tool: string, args: Record<string, unknown>, flags: string[] = []) =>
  codexCall(world, name, tool, args, { flags })

test("scout: Codex's model receives the scout's report in its next request", async () => {
  const { result, parent, output, got } = await codex("parent_scout", TOOL("scout"), {
    cwd: world.repo,
    task: "What does the README say?",
  })
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
  const args = { cwd: world.repo, task: "x" }
  const { result, parent, output, got } = await codex("parent_missing", TOOL("no_such_tool"), args)
  expect(result.code).toBe(0)
  expect(parent).toHaveLength(2)
  expect(output?.output).toContain("unsupported call")
  expect(got).toEqual({})
}, 180_000)

const exists = (path: string) => Bun.file(path).exists()

test("control: without the approval, exec refuses the worker before our server sees it, and nothing is written", async () => {
  const auto = ["-c", 'mcp_servers.opencode-agents.tools.worker.approval_mode="auto"']
  const { result, parent, output, got } = await codex(
    "parent_unapproved",
    TOOL("worker"),
    { cwd: world.repo, task: "Write the note. [script:edit]" },
    auto,
  )
  expect(result.code).toBe(0)
  expect(parent).toHaveLength(2)
  expect(output?.output).toContain("MCP tool call requires approval, but approval policy is never")
  expect(got).toEqual({})
  expect(world.model.requests.some((r) => r.api === "chat")).toBe(false)
  expect(await exists(`${world.repo}/note.txt`)).toBe(false)
}, 180_000)

test("worker: its edit lands in the repository and Codex's model receives the changed file", async () => {
  const { result, parent, got } = await codex("parent_worker", TOOL("worker"), {
    cwd: world.repo,
    task: "Write the note. [script:edit]",
  })
  expect(result.code).toBe(0)
  expect(parent).toHaveLength(2)
  expect(got).toMatchObject({ status: "succeeded" })
  expect(JSON.stringify(got.files_changed)).toContain("note.txt")
  expect(await Bun.file(`${world.repo}/note.txt`).text()).toBe("written by the worker\n")
  expect(result.stdout).toContain("note.txt")
}, 180_000)

test("runner: Codex's model receives the digest naming the failure and the exit code", async () => {
  const args = { cwd: world.repo, command: "python3 suite.py", objective: "Which tests fail? [script:suite]" }
  const { result, parent, got } = await codex("parent_runner", TOOL("runner"), args)
  expect(result.code).toBe(0)
  expect(parent).toHaveLength(2)
  expect(got).toMatchObject({ status: "succeeded", exit_code: 1 })
  expect(String(got.report)).toContain("parser > rejects trailing commas")
  expect(result.stdout).toContain("parser > rejects trailing commas")
}, 180_000)

test("isolated worker: Codex's model receives the patch, the repository is untouched, and patch_apply writes it", async () => {
  const worker = await codex("parent_isolated", TOOL("worker"), {
    cwd: world.repo,
    task: "Write it aside. [script:held]",
    isolation: "worktree",
  })
  expect(worker.result.code).toBe(0)
  const patch = worker.got.patch as { patch_id: string; digest: string; files: Array<{ path: string }> } | undefined
  expect(patch?.files.map((file) => file.path)).toEqual(["held.txt"])
  expect(await exists(`${world.repo}/held.txt`)).toBe(false)

  const applied = await codex("parent_apply", TOOL("patch_apply"), {
    patch_id: patch?.patch_id,
    digest: patch?.digest,
    cwd: world.repo,
  })
  expect(applied.result.code).toBe(0)
  expect(applied.parent).toHaveLength(2)
  expect(applied.got).toMatchObject({
    patch_id: patch?.patch_id,
    state: "applied",
    applied: [{ path: "held.txt", change: "added" }],
  })
  expect(await Bun.file(`${world.repo}/held.txt`).text()).toBe("held as a patch\n")
}, 240_000)
