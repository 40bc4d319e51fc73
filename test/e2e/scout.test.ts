// End to end: the compiled binary as an MCP server over stdio, the real OpenCode, the scripted
// model. Checks that OpenCode really ran the scripted grep/read (the model saw their output) and
// that the report and structured fields reach the parent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { mkdir, rm, symlink, writeFile } from "node:fs/promises"
import { connect } from "../../src/opencode/client"
import { readServerRecord, stopServer } from "../../src/opencode/server"
import { createDemoRepository, DEMO_TASK } from "../../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { run } from "../../src/util/process"
import { BINARY, connectStdio, textOf, TEST_PATH, type Connected } from "../helpers/mcp"

let model: ScriptedModel
let home: IsolatedHome
let repo: string
let mcp: Connected

beforeAll(async () => {
  model = await startScriptedModel({ scripts: { json_answer: { turns: [{ steps: [{ text: '{"count":3}' }] }] } } })
  home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
  repo = await createDemoRepository()
  mcp = await connectStdio(home.env)
})

afterAll(async () => {
  await mcp?.close()
  if (home) await stopServer(home.paths)
  await model?.stop()
  await home?.dispose()
  if (repo) await rm(repo, { recursive: true, force: true })
})

const call = (args: Record<string, unknown>) =>
  mcp.client.callTool({ name: "scout", arguments: args }) as Promise<CallToolResult>

async function sessionsIn(directory: string) {
  const record = await readServerRecord(home.paths)
  if (!record) return []
  return (await connect(record, { standIns: home.paths.opencodeDirsDir }).session.list({ directory })).data ?? []
}

describe("the compiled binary", () => {
  test("prints the version baked in at build time", async () => {
    const result = await run([BINARY, "--version"])
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  test("lists scout with the published arguments and annotations", async () => {
    const { tools } = await mcp.client.listTools()
    const scout = tools.find((tool) => tool.name === "scout")!
    expect(scout.inputSchema.required).toEqual(["cwd", "task"])
    expect(scout.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false })
    expect(scout.outputSchema?.properties).toHaveProperty("status")
    expect(mcp.client.getInstructions()).toContain("scout")
  })
})

describe("scout on the real OpenCode", () => {
  test("runs the scripted grep and read, and returns the report with its facts", async () => {
    model.reset()
    const progress: string[] = []
    const result = (await mcp.client.callTool(
      { name: "scout", arguments: { cwd: repo, task: DEMO_TASK } },
      {
        onprogress: (p) => progress.push(p.message ?? ""),
      },
    )) as CallToolResult

    // OpenCode executed the tools: their real output came back to the model.
    const outputs = model.toolResults()
    expect(outputs.map((r) => r.tool)).toEqual(["grep", "read"])
    expect(outputs[0]!.output).toContain("tally.ts")
    expect(outputs[0]!.output).toContain("TODO: ignore case")
    expect(outputs[1]!.output).toContain("A tiny counter library")

    const structured = result.structuredContent as Record<string, unknown>
    expect(result.isError).toBeFalsy()
    expect(structured).toMatchObject({ status: "succeeded", model: "scripted/fast", steps: 3 })
    expect(structured.session_id).toMatch(/^ses_/)
    expect(structured.report).toContain("A tiny counter library")
    expect((structured.tokens as { input: number }).input).toBeGreaterThan(0)
    expect(structured.tool_calls).toEqual([
      { tool: "grep", status: "completed", target: "TODO" },
      { tool: "read", status: "completed", target: "README.md" },
    ])
    expect(textOf(result)).toContain("status: succeeded")
    expect(progress).toContain("step 1")
    // The working session is deleted at the end; only its parked copy (for task_continue) remains.
    const parked = String(structured.transcript).match(/ses_\w+/)?.[0]
    expect((await sessionsIn(repo)).map((session) => session.id)).toEqual([parked!])
  })

  test("a dead OpenCode server is restarted on the next call", async () => {
    await call({ cwd: repo, task: DEMO_TASK })
    const before = (await readServerRecord(home.paths))!
    process.kill(before.pid, "SIGKILL")
    const result = await call({ cwd: repo, task: DEMO_TASK })
    expect(textOf(result)).toContain("status: succeeded")
    const after = (await readServerRecord(home.paths))!
    expect(after.pid).not.toBe(before.pid)
    expect(after.password).not.toBe(before.password)
  })

  test("an output_schema answer is checked by the worker the binary embeds", async () => {
    const schema = { type: "object", properties: { count: { type: "integer" } }, required: ["count"] }
    const result = await call({ cwd: repo, task: "[script:json_answer] count", output_schema: schema })
    const structured = result.structuredContent as { status: string; output?: unknown; output_error?: unknown }
    // A worker the binary could not start would leave output_error ("could not be checked"), not output.
    expect(structured.output_error).toBeUndefined()
    expect(structured.output).toEqual({ count: 3 })
    expect(structured.status).toBe("succeeded")
  })

  test("a model override is checked against OpenCode's catalog and used", async () => {
    const result = await call({ cwd: repo, task: DEMO_TASK, model: "scripted/second" })
    expect((result.structuredContent as { model: string }).model).toBe("scripted/second")
  })
})

describe("bad input is a clear error and leaves no session", () => {
  test.each([
    ["a missing workspace", { cwd: "/nonexistent/repo", task: "x" }, "does not exist"],
    ["a relative workspace", { cwd: "repo", task: "x" }, "absolute path"],
    ["a file as workspace", { cwd: "/etc/hostname", task: "x" }, "not a directory"],
    ["an unknown model", { cwd: import.meta.dir, task: "x", model: "scripted/nope" }, 'no model "scripted/nope"'],
    [
      "an unknown variant",
      { cwd: import.meta.dir, task: "x", model: "scripted/fast", variant: "max" },
      'no variant "max"',
    ],
  ])("%s", async (_, args, message) => {
    const before = await sessionsIn(import.meta.dir)
    const result = await call(args)
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain(message)
    expect(textOf(result)).toContain("next:")
    expect(await sessionsIn(import.meta.dir)).toEqual(before)
  })

  test("an invalid config file names the file and the field, and is not rewritten", async () => {
    const bad = JSON.stringify({ version: 1, stepLimits: { profile: "custom", scout: 2, worker: 8, runner: 8 } })
    await writeFile(home.paths.configFile, bad)
    try {
      const result = await call({ cwd: repo, task: "x" })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain(home.paths.configFile)
      expect(textOf(result)).toContain("stepLimits.scout")
      expect(await Bun.file(home.paths.configFile).text()).toBe(bad)
    } finally {
      await writeFile(home.paths.configFile, JSON.stringify({ version: 1, models: { scout: "scripted/fast" } }))
    }
  })

  test("a missing opencode executable is a prerequisite error", async () => {
    // PATH holds only a directory with git in it: no opencode anywhere on it.
    const other = await createIsolatedHome({ modelUrl: model.url, env: {} })
    await mkdir(`${other.root}/bin`)
    await symlink("/usr/bin/git", `${other.root}/bin/git`)
    other.env.PATH = `${other.root}/bin`
    const bare = await connectStdio(other.env)
    try {
      const result = (await bare.client.callTool({
        name: "scout",
        arguments: { cwd: repo, task: "x" },
      })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain('"opencode" was not found on PATH')
    } finally {
      await bare.close()
    }
    // With nothing on PATH the missing program is named the same way, not an internal error (git runs
    // from /usr inside the sandbox, so OpenCode is the first one missed).
    other.env.PATH = `${other.root}/nothing`
    const bareer = await connectStdio(other.env)
    try {
      const result = (await bareer.client.callTool({
        name: "scout",
        arguments: { cwd: repo, task: "x" },
      })) as CallToolResult
      expect(result.isError).toBe(true)
      expect(textOf(result)).toMatch(/"(opencode|git)" was not found on PATH/)
      expect(textOf(result)).not.toContain("internal error")
    } finally {
      await bareer.close()
      await other.dispose()
    }
  })
})
