// The shared server offers no unsandboxed shell to anyone, a holder of its password included (a runner
// with host networking that learned it, say). The test is the attacker: it calls OpenCode's own
// command endpoints with the password — POST /session/:id/shell (with our agent and OpenCode's
// `build`), POST /pty and /api/pty with a command — and no host command runs (a marker file is never created). Control: the same
// calls on a plain `opencode serve` of the same home (our plugin loaded, but not our server's setup)
// create the marker. Our sandboxed shell keeps working beside it.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { authHeader } from "../../src/opencode/server"
import type { Spawned } from "../../src/util/process"
import { makeRepo, runAgent, scratch, startWorld, stopWorld, type World } from "./_world"
import { SCOUT } from "../helpers/steps"
import { until } from "../helpers/until"
import { plainServe } from "../helpers/plain-serve"

/** Where the built-in bash tool's command leaves its mark when it runs on the host. */
const BASH_MARKER = `${tmpdir()}/oc-orch-bash-marker-${process.pid}`
let world: World

beforeAll(async () => {
  world = await startWorld({
    host_bash: {
      turns: [
        {
          steps: [
            { tool: "bash", args: { command: `touch ${BASH_MARKER}`, description: "touch a file" } },
            { text: "done" },
          ],
        },
      ],
    },
    sandboxed: {
      turns: [{ steps: [{ tool: "sandbox_shell", args: { command: "echo sandboxed-ok" } }, { text: "done" }] }],
    },
  })
}, 120_000)
afterAll(async () => {
  await rm(BASH_MARKER, { force: true })
  await stopWorld(world)
})

interface Target {
  url: string
  authorization: string
}

async function call(target: Target, method: string, path: string, directory: string, body?: unknown) {
  const separator = path.includes("?") ? "&" : "?"
  const response = await fetch(`${target.url}${path}${separator}directory=${encodeURIComponent(directory)}`, {
    method,
    headers: {
      authorization: target.authorization,
      "content-type": "application/json",
      "x-opencode-directory": directory,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  })
  return { status: response.status, body: await response.text() }
}

/** Every way in that runs a command on the host, each aimed at its own marker; returns the markers. */
async function attack(target: Target, directory: string, markers: string): Promise<string[]> {
  const created = JSON.parse((await call(target, "POST", "/session", directory, { title: "attacker" })).body) as {
    id: string
  }
  const paths: string[] = []
  const marker = (name: string) => {
    const path = `${markers}/${name}`
    paths.push(path)
    return path
  }
  for (const agent of [SCOUT, "build"])
    await call(target, "POST", `/session/${created.id}/shell`, directory, {
      agent,
      command: `touch ${marker(`shell-${agent}`)}`,
    })
  await call(target, "POST", "/pty", directory, { command: "/bin/sh", args: ["-c", `touch ${marker("pty")}`] })
  await call(target, "POST", "/api/pty", directory, { command: "/bin/sh", args: ["-c", `touch ${marker("api-pty")}`] })
  return paths
}

/**
 * A session on OpenCode's own `build` agent whose model calls the built-in bash tool, every ask of it
 * approved by the attacker (who holds the password); resolves once the session answered or 30 s passed.
 */
async function bashThroughBuild(target: Target, directory: string, label: string) {
  const session = (
    JSON.parse((await call(target, "POST", "/session", directory, { title: `attacker ${label}` })).body) as {
      id: string
    }
  ).id
  const prompt = {
    agent: "build",
    model: { providerID: "scripted", modelID: "fast" },
    parts: [{ type: "text", text: `[script:host_bash] go ${label}` }],
  }
  await call(target, "POST", `/session/${session}/prompt_async`, directory, prompt)
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    const asks = JSON.parse((await call(target, "GET", "/permission", directory)).body) as Array<{
      id: string
      sessionID: string
    }>
    for (const ask of asks.filter((a) => a.sessionID === session))
      await call(target, "POST", `/permission/${ask.id}/reply`, directory, { reply: "once" })
    const messages = JSON.parse((await call(target, "GET", `/session/${session}/message`, directory)).body) as Array<{
      info: { role: string; time: { completed?: number }; finish?: string }
      parts: Array<{ type: string; tool?: string; state?: { output?: string; error?: string } }>
    }>
    const last = messages.at(-1)?.info
    if (last?.role === "assistant" && last.time.completed && last.finish !== "tool-calls") {
      const part = messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.tool === "bash")
      return `${part?.state?.output ?? ""}${part?.state?.error ?? ""}`
    }
    await Bun.sleep(200)
  }
  return "no answer"
}

test("with the shared server's password, no endpoint runs a host command: session shell, pty, api pty", async () => {
  const repo = await makeRepo(world)
  const markers = await scratch(world, "oc-orch-markers-")
  const { record } = await world.runtime.opencode()
  const target = { url: record.url, authorization: authHeader(record) }
  // In a workspace, and in a directory no delegation ever used (its instance starts for the attacker).
  const elsewhere = await scratch(world)
  const paths = [...(await attack(target, repo, markers)), ...(await attack(target, elsewhere, markers))]
  // As long as the control below takes to see its first marker, and more.
  await Bun.sleep(3000)
  expect(paths.filter((path) => existsSync(path))).toEqual([])
}, 90_000)

test("with the password, a build-agent session whose asks the attacker approves runs the built-in bash tool on nothing", async () => {
  const repo = await makeRepo(world)
  const { record } = await world.runtime.opencode()
  const output = await bashThroughBuild({ url: record.url, authorization: authHeader(record) }, repo, "shared")
  expect(output).toContain("runs no command outside the sandbox")
  expect(existsSync(BASH_MARKER)).toBe(false)
}, 90_000)

test("our sandboxed shell still runs: scout's sandbox_shell answers", async () => {
  const repo = await makeRepo(world)
  const { results } = await runAgent(world, SCOUT, repo, "sandboxed")
  expect(results.map((r) => r.tool)).toEqual(["sandbox_shell"])
  expect(results[0]!.output).toContain("sandboxed-ok")
  expect(results[0]!.output).toContain("[exit code: 0]")
}, 90_000)

test("control: the same calls on a plain opencode serve of the same home run host commands", async () => {
  const repo = await makeRepo(world)
  const markers = await scratch(world, "oc-orch-markers-")
  const log = `${markers}/serve.log`
  const password = "control-password"
  let plain: Spawned | undefined
  try {
    const started = await plainServe(world.home.env, log, { OPENCODE_SERVER_PASSWORD: password })
    plain = started.server
    const url = started.url
    expect(url).toBeDefined()
    const target = { url: url!, authorization: authHeader({ username: "opencode", password }) }
    const paths = await attack(target, repo, markers)
    expect(await until(() => paths.every((path) => existsSync(path)), 15_000)).toBe(true)
    await bashThroughBuild(target, repo, "plain")
    expect(existsSync(BASH_MARKER)).toBe(true)
  } finally {
    await plain?.kill(2000)
    await rm(`${repo}/.opencode`, { recursive: true, force: true })
  }
}, 90_000)
