// The shared server offers no unsandboxed shell to anyone, a holder of its password included (a runner
// with host networking that learned it, say). The test is the attacker: it calls OpenCode's own
// command endpoints with the password — POST /session/:id/shell (with our agent and OpenCode's
// `build`), POST /pty and /api/pty with a command — and no host command runs (a marker file is never created). Control: the same
// calls on a plain `opencode serve` of the same home (our plugin loaded, but not our server's setup)
// create the marker. Our sandboxed shell keeps working beside it.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync, readFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { authHeader, SHARED_SERVER_ENV } from "../../src/opencode/server"
import { spawn, type Spawned } from "../../src/util/process"
import { makeRepo, runAgent, scratch, startWorld, stopWorld, type World } from "./_world"

const SCOUT = "opencode-orchestrator-scout"
let world: World

beforeAll(async () => {
  world = await startWorld({
    sandboxed: { turns: [{ steps: [{ tool: "sandbox_shell", args: { command: "echo sandboxed-ok" } }, { text: "done" }] }] },
  })
}, 120_000)
afterAll(() => stopWorld(world))

interface Target {
  url: string
  authorization: string
}

async function call(target: Target, method: string, path: string, directory: string, body?: unknown) {
  const separator = path.includes("?") ? "&" : "?"
  const response = await fetch(`${target.url}${path}${separator}directory=${encodeURIComponent(directory)}`, {
    method,
    headers: { authorization: target.authorization, "content-type": "application/json", "x-opencode-directory": directory },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  })
  return { status: response.status, body: await response.text() }
}

/** Every way in that runs a command on the host, each aimed at its own marker; returns the markers. */
async function attack(target: Target, directory: string, markers: string): Promise<string[]> {
  const created = JSON.parse((await call(target, "POST", "/session", directory, { title: "attacker" })).body) as { id: string }
  const paths: string[] = []
  const marker = (name: string) => {
    const path = `${markers}/${name}`
    paths.push(path)
    return path
  }
  for (const agent of [SCOUT, "build"]) await call(target, "POST", `/session/${created.id}/shell`, directory, { agent, command: `touch ${marker(`shell-${agent}`)}` })
  await call(target, "POST", "/pty", directory, { command: "/bin/sh", args: ["-c", `touch ${marker("pty")}`] })
  await call(target, "POST", "/api/pty", directory, { command: "/bin/sh", args: ["-c", `touch ${marker("api-pty")}`] })
  return paths
}

async function until(check: () => boolean, ms: number) {
  const deadline = Date.now() + ms
  while (!check() && Date.now() < deadline) await Bun.sleep(100)
  return check()
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
  // The home's environment without the shared server's own variables (its marker, no project config).
  const env = Object.fromEntries(Object.entries(world.home.env).filter(([name]) => !(name in SHARED_SERVER_ENV)))
  let plain: Spawned | undefined
  try {
    plain = spawn([`${import.meta.dir}/../../node_modules/.bin/opencode`, "serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs", "--log-level", "WARN"], {
      env: { ...env, OPENCODE_SERVER_PASSWORD: password },
      logFile: log,
    })
    let url: string | undefined
    await until(() => {
      url = (existsSync(log) ? readFileSync(log, "utf8") : "").match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)?.[1]
      return url !== undefined
    }, 30_000)
    expect(url).toBeDefined()
    const paths = await attack({ url: url!, authorization: authHeader({ username: "opencode", password }) }, repo, markers)
    expect(await until(() => paths.every((path) => existsSync(path)), 15_000)).toBe(true)
  } finally {
    await plain?.kill(2000)
    await rm(`${repo}/.opencode`, { recursive: true, force: true })
  }
}, 90_000)
