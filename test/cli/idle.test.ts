// An idle MCP server costs what `initialize` and `tools/list` need and nothing more: until its first tool
// call it reads no task record (a garbage one stays where it is, not moved aside), takes no lease and
// starts no OpenCode server; the first call does all of it, and the first delegation starts the shared
// server and a watchdog that waits in a few MB (a shell loop), where `supervise` itself takes ~60 MB.
// On the real OpenCode with the scripted model, `serve` run from source over stdio.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { mkdir, writeFile } from "node:fs/promises"
import { readServerRecord } from "../../src/opencode/server"
import { alive, spawn } from "../../src/util/process"
import { footprint } from "../../src/util/footprint"
import { connectStdio, ROOT } from "../helpers/mcp"
import { makeRepo, startWorld, stopWorld, structured, type World } from "../mcp/_setup"

let world: World
const GARBAGE = "task_aaaaaaaa_00000003"
/** Well above the shell loop (~2 MB), well below any Bun process (the runtime alone is ~25 MB). */
const SMALL_WATCHDOG_MB = 12

beforeAll(async () => {
  world = await startWorld({ quick: { turns: [{ steps: [{ text: "quick report" }] }] } })
  await mkdir(world.home.paths.tasksDir, { recursive: true })
  await writeFile(`${world.home.paths.tasksDir}/${GARBAGE}.json`, "{ not json")
}, 120_000)
afterAll(() => stopWorld(world))

const serve = () => connectStdio(world.home.env, [process.execPath, `${ROOT}/src/cli/main.ts`, "serve"])
const garbage = () => `${world.home.paths.tasksDir}/${GARBAGE}.json`
const leased = (pid: number) => existsSync(`${world.home.paths.leasesDir}/${pid}`)
const cmdline = (pid: string) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ")
  } catch {
    return ""
  }
}
const childrenOf = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(/\s+/).filter(Boolean),
  )
/** Processes whose command line says they are the watchdog of `parent`. */
const watchdogsOf = (parent: number) =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name) && cmdline(name).includes(`supervise --parent ${parent}`))
    .map(Number)

test("idle: after initialize and tools/list, no record read, no lease taken, no OpenCode started", async () => {
  const mcp = await serve()
  try {
    const { tools } = await mcp.client.listTools()
    expect(tools.map((tool) => tool.name)).toContain("scout")
    // Past the moment recovery and retention's first pass would have run in the background.
    await Bun.sleep(1500)
    expect(readFileSync(garbage(), "utf8")).toBe("{ not json")
    expect(existsSync(`${garbage()}.corrupt`)).toBe(false)
    expect(leased(mcp.pid)).toBe(false)
    expect(await readServerRecord(world.home.paths)).toBeUndefined()
    expect(childrenOf(mcp.pid).filter((pid) => cmdline(pid).includes("opencode"))).toEqual([])
    expect(watchdogsOf(mcp.pid)).toEqual([])
  } finally {
    await mcp.close()
  }
}, 60_000)

test("control: a first call reads records and leases; a first scout starts OpenCode, a small watchdog", async () => {
  const mcp = await serve()
  try {
    const listed = structured(await mcp.client.callTool({ name: "task_list", arguments: {} }))
    const corrupt = listed.corrupt_files as { path: string }[]
    expect(corrupt.map((file) => file.path)).toEqual([garbage()])
    expect(existsSync(garbage())).toBe(false)
    expect(leased(mcp.pid)).toBe(true)

    const repo = await makeRepo(world)
    const scout = structured(
      await mcp.client.callTool({ name: "scout", arguments: { cwd: repo, task: "[script:quick] look" } }),
    )
    expect(scout.status).toBe("succeeded")
    const server = await readServerRecord(world.home.paths)
    expect(server && alive(server.pid)).toBe(true)
    const [watchdog, ...more] = watchdogsOf(mcp.pid)
    expect(more).toEqual([])
    // Leased under its own PID from the start: the lease holds once this serve is gone.
    expect(leased(watchdog!)).toBe(true)
    expect((await footprint(watchdog!)).rssMb).toBeLessThan(SMALL_WATCHDOG_MB)
  } finally {
    await mcp.close()
  }
}, 120_000)

test("control: `supervise` itself, waiting the same way, is far above the small watchdog's bound", async () => {
  const parent = spawn(["sleep", "30"])
  const supervise = spawn([process.execPath, `${ROOT}/src/cli/main.ts`, "supervise", "--parent", String(parent.pid)], {
    env: world.home.env,
  })
  try {
    // Waiting: its lease taken, the parent still there.
    for (let i = 0; i < 100 && !leased(supervise.pid); i++) await Bun.sleep(100)
    expect(leased(supervise.pid)).toBe(true)
    expect((await footprint(supervise.pid)).rssMb).toBeGreaterThan(SMALL_WATCHDOG_MB)
  } finally {
    await supervise.kill()
    await parent.kill()
  }
}, 60_000)
