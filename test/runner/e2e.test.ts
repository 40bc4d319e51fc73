// The runner end to end: the MCP `runner` tool, the real OpenCode, the runner agent, the plugin's
// sandbox_run tools under bwrap, the log and the digest. A test suite that prints 5 MB with three
// failing tests buried in it reaches the parent as a few KB naming all three and the exit code.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { stat } from "node:fs/promises"
import { connect, makeRepo, startWorld, stopWorld, structured, taskFiles, text, type World } from "../mcp/_setup"
import { buildPlugin } from "../plugin/_world"

// bun-test style: 60 000 passing lines, noise between them, three failures at scattered places.
const FAKE_SUITE = `
import random, sys
random.seed(7)
failing = {11111: "parser > rejects trailing commas", 33333: "cache > evicts the oldest entry", 52222: "cli > exits 2 on a bad flag"}
out = sys.stdout
for i in range(60000):
    if i in failing:
        out.write("(fail) %s [1.20ms]\\n" % failing[i])
        out.write("error: expect(received).toBe(expected)\\n    at <anonymous> (/repo/test/case%d.test.ts:12:5)\\n" % i)
    else:
        out.write("(pass) suite %d > case %d [0.01ms]\\n" % (i // 100, i))
    out.write("debug: %s\\n" % ("x" * random.randint(20, 60)))
out.write("\\n 59997 pass\\n 3 fail\\nRan 60000 tests across 600 files. [9.00s]\\n")
sys.exit(1)
`

const run = (tool: string, command: string, timeout = 120) => ({ tool, args: { command, timeout_seconds: timeout } })

let world: World
beforeAll(async () => {
  await buildPlugin()
  world = await startWorld({
    suite: { turns: [{ steps: [run("sandbox_run_ro", "python3 suite.py"), { text: "{{lastToolOutput}}" }] }] },
    writable_net: {
      turns: [
        { steps: [run("sandbox_run_network", "echo built > out.txt; cat out.txt"), { text: "{{lastToolOutput}}" }] },
      ],
    },
  })
}, 120_000)
afterAll(() => stopWorld(world))

test("5 MB of test output with three buried failures reaches the parent as < 4 KB naming all three and the exit code", async () => {
  const repo = await makeRepo(world)
  await Bun.write(`${repo}/suite.py`, FAKE_SUITE)
  const { client, close } = await connect(world)
  try {
    const result = await client.callTool(
      {
        name: "runner",
        arguments: {
          cwd: repo,
          command: "python3 suite.py",
          objective: "Which tests fail? [script:suite]",
          expected: "all tests pass",
        },
      },
      { timeout: 120_000 },
    )
    const out = structured(result)
    expect(out.status).toBe("succeeded")
    expect(out.exit_code).toBe(1)
    const log = String(out.log)
    expect(log.startsWith(`${world.home.paths.runsDir}/run-`)).toBe(true)
    expect((await stat(log)).size).toBeGreaterThan(5_000_000)

    // What the runner tool handed the model: the digest, naming all three with their log lines.
    const digest = world.model.toolResults().find((r) => r.tool === "sandbox_run_ro")!.output
    for (const name of [
      "parser > rejects trailing commas",
      "cache > evicts the oldest entry",
      "cli > exits 2 on a bad flag",
    ]) {
      expect(digest).toContain(name)
      expect(out.report).toContain(name)
    }
    expect(digest).toContain("exit code: 1 (failed)")
    expect(digest).toContain("3 fail")

    const parentBytes = { structured: JSON.stringify(out).length, text: text(result).length }
    console.log(
      `runner e2e: the parent received ${parentBytes.structured} bytes structured, ${parentBytes.text} bytes text`,
    )
    expect(parentBytes.structured).toBeLessThan(4096)
    expect(parentBytes.text).toBeLessThan(4096)
    expect(text(result)).toContain(`runner: exit code 1, 120010 lines of output in ${log}`)

    // The same evidence is in the task's record, so task_result delivers it after a `running` return too.
    const later = structured(await client.callTool({ name: "task_result", arguments: { task_id: out.task_id } }))
    expect(later).toMatchObject({ exit_code: 1, log })
  } finally {
    await close()
  }
})

test("workspace_access and network_access pick the runner agent and its tool", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    const result = await client.callTool({
      name: "runner",
      arguments: {
        cwd: repo,
        command: "echo built > out.txt; cat out.txt",
        objective: "[script:writable_net]",
        workspace_access: "writable",
        network_access: "host",
        timeout_seconds: 60,
      },
    })
    const out = structured(result)
    expect(out.exit_code).toBe(0)
    expect(out.report).toContain("exit code: 0 (succeeded)")
    expect(await Bun.file(`${repo}/out.txt`).text()).toBe("built\n")
    expect(out.files_changed).toEqual([{ path: "out.txt", change: "added" }])
  } finally {
    await close()
  }
})

test("a command timeout that leaves the runner under 60 s is refused before any task starts", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    const before = (await taskFiles(world)).length
    const result = await client.callTool({
      name: "runner",
      arguments: { cwd: repo, command: "true", objective: "x", timeout_seconds: 1150 },
    })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain("a command timeout of 1150s leaves less than 60s of the 1200s operation budget")
    expect((await taskFiles(world)).length).toBe(before)
    const bad = await client.callTool({
      name: "runner",
      arguments: { cwd: repo, command: "true", objective: "x", timeout_seconds: 0 },
    })
    expect(bad.isError).toBe(true)
  } finally {
    await close()
  }
})

test("scout, worker and runner keep the arguments and annotations the opencode-agents servers before them published (drop-in)", async () => {
  const { client, close } = await connect(world)
  try {
    const tools = (await client.listTools()).tools
    const tool = (name: string) => tools.find((t) => t.name === name)!
    for (const name of ["scout", "worker"]) expect(tool(name).inputSchema.required).toEqual(["cwd", "task"])
    expect(tool("scout").annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      openWorldHint: false,
    })
    expect(tool("worker").annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      openWorldHint: false,
    })
    const runner = tool("runner")
    expect(runner.inputSchema.required).toEqual(["cwd", "command", "objective"])
    expect(runner.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true })
    const props = runner.inputSchema.properties as Record<string, Record<string, unknown>>
    // The listing leaves out minLength 1 (the surface budget); the call still refuses an empty one.
    for (const name of ["cwd", "command", "objective"]) expect(props[name]).toMatchObject({ type: "string" })
    expect(props.expected).toMatchObject({ type: "string" })
    expect(props.timeout_seconds).toMatchObject({ type: "integer", minimum: 1, maximum: 3600 })
    expect(props.workspace_access).toMatchObject({ enum: ["read_only", "writable"], default: "read_only" })
    expect(props.network_access).toMatchObject({ enum: ["disabled", "host"], default: "disabled" })
    expect(runner.outputSchema?.properties).toHaveProperty("exit_code")
  } finally {
    await close()
  }
})
