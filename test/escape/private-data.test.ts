// OpenCode's own database, snapshot repositories and logs under the user's data dir hold copies of
// workspace files, `.env` included. The shared server runs with a private umask (077), and what
// OpenCode left there before it started is made private: after a scout reads a `.env`, nothing under
// OpenCode's data or state dir (of the isolated HOME) is group- or other-accessible, the files planted
// 0644/0755 beforehand included. Controls: the check flags a file created 0644; and a plain
// `opencode serve` of the same kind (the test's own umask) leaves readable copies there.
// OpenCode's own snapshots are off on our server (`snapshot: false`): no snapshot repository is made
// at all. Control: the plain serve makes one at its first step.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { chmod, lstat, mkdir, readdir, writeFile } from "node:fs/promises"
import type { Spawned } from "../../src/util/process"
import { makeRepo, runAgent, scratch, startWorld, stopWorld, type World } from "./_world"
import { SCOUT } from "../helpers/steps"
import { plainServe } from "../helpers/plain-serve"

const SECRET = "API_TOKEN=private-value-7f3a"
let world: World

beforeAll(async () => {
  world = await startWorld({
    read_env: {
      turns: [
        {
          steps: [
            { tool: "sandbox_shell", args: { command: "cat .env" } },
            { tool: "read", args: { filePath: ".env" } },
            { text: "read it" },
          ],
        },
      ],
    },
    hello: { turns: [{ steps: [{ text: "hello" }] }] },
  })
}, 120_000)
afterAll(() => stopWorld(world))

/** Every path under `dir` (itself included) that group or other may read, write or enter; links skipped. */
async function exposed(dir: string): Promise<string[]> {
  const found: string[] = []
  const pending = [dir]
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    const info = await lstat(current).catch(() => undefined)
    if (!info || info.isSymbolicLink()) continue
    if (info.mode & 0o077) found.push(`${current} ${(info.mode & 0o777).toString(8)}`)
    if (info.isDirectory()) for (const name of await readdir(current)) pending.push(`${current}/${name}`)
  }
  return found
}

async function repoWithEnv(): Promise<string> {
  const repo = await makeRepo(world)
  await writeFile(`${repo}/.env`, `${SECRET}\n`)
  return repo
}

test("after a scout reads a .env, nothing under OpenCode's data and state dirs is readable by others, old files included", async () => {
  const { opencodeDataDir, opencodeStateDir } = world.home.paths
  // Left by an OpenCode that ran with the usual umask before our server started.
  await mkdir(`${opencodeDataDir}/storage/legacy`, { recursive: true })
  await writeFile(`${opencodeDataDir}/storage/legacy/session.json`, `{"copy":"${SECRET}"}`)
  await chmod(opencodeDataDir, 0o755)
  await chmod(`${opencodeDataDir}/storage/legacy`, 0o755)
  await chmod(`${opencodeDataDir}/storage/legacy/session.json`, 0o644)
  expect((await exposed(opencodeDataDir)).length).toBeGreaterThan(0)

  const repo = await repoWithEnv()
  const { results } = await runAgent(world, SCOUT, repo, "read_env")
  expect(results.map((r) => r.tool)).toEqual(["sandbox_shell", "read"])
  expect(results[0]!.output).toContain(SECRET)
  // OpenCode's database holds the session's tool output; it keeps no snapshot repository on our server.
  expect(existsSync(`${opencodeDataDir}/opencode.db`)).toBe(true)
  expect(existsSync(`${opencodeDataDir}/snapshot`)).toBe(false)
  expect(await exposed(opencodeDataDir)).toEqual([])
  expect(await exposed(opencodeStateDir)).toEqual([])
}, 120_000)

test("control: the check flags a file created 0644 and a directory 0755", async () => {
  const dir = await scratch(world)
  await chmod(dir, 0o700)
  await mkdir(`${dir}/open`, { mode: 0o755 })
  await chmod(`${dir}/open`, 0o755)
  await writeFile(`${dir}/open/copy.json`, "{}", { mode: 0o644 })
  await chmod(`${dir}/open/copy.json`, 0o644)
  expect(await exposed(dir)).toEqual([`${dir}/open 755`, `${dir}/open/copy.json 644`])
})

test("control: a plain opencode serve, started with the usual umask, leaves its database readable by others and snapshots its first step", async () => {
  const data = await scratch(world, "oc-orch-plain-data-")
  const log = `${data}/serve.log`
  const repo = await repoWithEnv()
  let plain: Spawned | undefined
  const previous = process.umask(0o022)
  try {
    const started = await plainServe(world.home.env, log, {
      XDG_DATA_HOME: `${data}/share`,
      OPENCODE_SERVER_PASSWORD: "control-password",
    })
    plain = started.server
    const url = started.url
    expect(url).toBeDefined()
    const authorization = `Basic ${Buffer.from("opencode:control-password").toString("base64")}`
    const created = await fetch(`${url}/session?directory=${encodeURIComponent(repo)}`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ title: "plain" }),
    })
    expect(created.ok).toBe(true)
    expect((await exposed(`${data}/share/opencode`)).length).toBeGreaterThan(0)
    const session = (await created.json()) as { id: string }
    const prompted = await fetch(`${url}/session/${session.id}/message?directory=${encodeURIComponent(repo)}`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ parts: [{ type: "text", text: "Say hello [script:hello]" }] }),
    })
    expect(prompted.ok).toBe(true)
    expect(existsSync(`${data}/share/opencode/snapshot`)).toBe(true)
  } finally {
    process.umask(previous)
    await plain?.kill(2000)
  }
}, 90_000)
