// The model provider under faults, through the compiled serve on the real OpenCode: a 429 and a cut
// stream are retried by OpenCode and the worker succeeds; a provider that keeps failing (500) is
// retried until the deadline, and the result names the provider's error; a model that hangs is
// stopped at the deadline. Each keeps the edit made before the fault, leaves a truthful record and a
// free workspace, and the next delegation there works; when the last MCP process leaves, nothing of
// ours is left running.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { createRepository } from "../../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import { readJson } from "../../src/util/fs"
import { leftoversAfter, processesOf } from "../helpers/leftovers"
import { connectStdio, TEST_PATH, type Connected } from "../helpers/mcp"

let model: ScriptedModel
let home: IsolatedHome
let mcp: Connected
const repos: string[] = []

const edit = { tool: "write", args: { filePath: "kept.txt", content: "kept\n" } }
beforeAll(async () => {
  model = await startScriptedModel({
    scripts: {
      rate_limited: {
        turns: [{ steps: [edit, { text: "done after a 429", fail: { kind: "429", times: 2, retryAfterSeconds: 1 } }] }],
      },
      cut: { turns: [{ steps: [edit, { text: "done after a cut stream", fail: { kind: "cut" } }] }] },
      failing: { turns: [{ steps: [edit, { text: "never", fail: { kind: "500", times: "always" } }] }] },
      hung: { turns: [{ steps: [edit, { text: "never", delayMs: 3_600_000 }] }] },
      next: {
        turns: [
          { steps: [{ tool: "write", args: { filePath: "next.txt", content: "next\n" } }, { text: "next done" }] },
        ],
      },
    },
  })
  home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
  mcp = await connectStdio({ ...home.env, OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS: "15000" })
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  if (home) await stopServer(home.paths)
  await model?.stop()
  await home?.dispose()
  const { rm } = await import("node:fs/promises")
  for (const repo of repos) await rm(repo, { recursive: true, force: true })
})

type Structured = Record<string, unknown> & {
  status: string
  task_id: string
  files_changed?: { path: string }[]
  error?: string
}
const worker = async (cwd: string, script: string) =>
  (
    await mcp.client.callTool(
      { name: "worker", arguments: { cwd, task: `[script:${script}] edit` } },
      {
        timeout: 120_000,
      },
    )
  ).structuredContent as Structured

async function settle(result: Structured) {
  let current = result
  for (let i = 0; i < 30 && current.status === "running"; i++)
    current = (
      await mcp.client.callTool(
        { name: "task_status", arguments: { task_id: current.task_id, wait_seconds: 10 } },
        { timeout: 60_000 },
      )
    ).structuredContent as Structured
  return current
}

test.each([
  ["a 429 twice (retry-after 1 s) is retried by OpenCode", "rate_limited", "succeeded"],
  ["a stream cut mid-answer is retried", "cut", "succeeded"],
  [
    "a provider that keeps answering 500 is retried until the deadline, and the result names its error",
    "failing",
    "timed_out",
  ],
  ["a model that hangs is stopped at the deadline", "hung", "timed_out"],
])(
  "%s: the edit is kept, the record is truthful, the workspace is free and works again",
  async (_name, script, status) => {
    const repo = await createRepository("oc-orch-model-fault-", { "README.md": "# r\n" })
    repos.push(repo)
    const result = await settle(await worker(repo, script))
    expect(result.status).toBe(status)
    expect(await Bun.file(`${repo}/kept.txt`).text()).toBe("kept\n")
    expect(result.files_changed?.map((f) => f.path)).toEqual(["kept.txt"])
    const record = (await readJson<TaskRecord>(`${home.paths.tasksDir}/${result.task_id}.json`))!
    expect(record.status as string).toBe(status)
    expect(record.result?.files?.map((f) => f.path)).toEqual(["kept.txt"])
    if (script === "failing") expect(result.error).toContain("retrying (Internal error (scripted).)")
    if (script === "hung") expect(result.error ?? "").not.toContain("retrying")
    expect(await Array.fromAsync(new Bun.Glob("*.json").scan(home.paths.locksDir))).toEqual([])
    // The next delegation in that workspace works.
    const next = await settle(await worker(repo, "next"))
    expect(next.status).toBe("succeeded")
    expect(await Bun.file(`${repo}/next.txt`).text()).toBe("next\n")
  },
  120_000,
)

test("after the last MCP process leaves, nothing it started is left running within 15 s", async () => {
  // Control: while the MCP process lives, the shared server (at least) is found by the same check.
  expect((await processesOf(home.root)).some((p) => p.command.includes("serve"))).toBe(true)
  await mcp.close()
  expect(await leftoversAfter(home.root)).toEqual([])
}, 30_000)
