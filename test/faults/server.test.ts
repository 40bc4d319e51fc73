// The shared server under faults, on the real OpenCode: a stalled server (SIGSTOP) is waited out, not
// killed, and the work on it finishes; a stale record never gets an unrelated process signalled; a
// record whose password the server does not take is left alone and a new server started.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { readServerRecord, probeServer, ensureServer, type ServerRecord } from "../../src/opencode/server"
import { alive, processStart, spawn } from "../../src/util/process"
import { writeJson } from "../../src/util/fs"
import { connect, makeRepo, startWorld, stopWorld, structured, type Connected, type World } from "../mcp/_setup"

let world: World
let first: Connected
let second: Connected
const strays: number[] = []

beforeAll(async () => {
  world = await startWorld({
    slow: { turns: [{ steps: [{ text: "slow report", delayMs: 4000 }] }] },
    quick: { turns: [{ steps: [{ text: "quick report" }] }] },
  })
  first = await connect(world)
  second = await connect(world, {}, "second-client")
}, 120_000)
afterAll(async () => {
  for (const pid of strays) if (alive(pid)) process.kill(pid, "SIGKILL")
  await first?.close()
  await second?.close()
  await stopWorld(world)
})

const scout = (mcp: Connected, cwd: string, script: string) => mcp.client.callTool({ name: "scout", arguments: { cwd, task: `[script:${script}] look` } }, undefined, { timeout: 120_000 })

test("a server stalled for 8 s (SIGSTOP) is waited out by another process's call: same server, both tasks finish", async () => {
  const repo = await makeRepo(world)
  expect(structured(await scout(first, repo, "quick")).status).toBe("succeeded")
  const before = (await readServerRecord(world.home.paths))!
  const inFlight = scout(first, repo, "slow")
  await Bun.sleep(1000)
  process.kill(before.pid, "SIGSTOP")
  let stalled: string | undefined
  try {
    // Control: during the stop the server is alive but silent, which the old check took for dead.
    stalled = await probeServer(before, 1000)
    const during = scout(second, repo, "quick")
    await Bun.sleep(8000)
    process.kill(before.pid, "SIGCONT")
    expect(structured(await during).status).toBe("succeeded")
  } finally {
    process.kill(before.pid, "SIGCONT")
  }
  expect(stalled).toBe("slow")
  expect(structured(await inFlight).status).toBe("succeeded")
  const after = (await readServerRecord(world.home.paths))!
  expect(after.pid).toBe(before.pid)
  expect(alive(before.pid)).toBe(true)
}, 120_000)

/** A long-running process whose command line looks like `opencode serve`. */
function lookalike(): number {
  const proc = spawn(["bash", "-c", "exec -a /opt/fake/opencode bash -c 'sleep 120' serve"], { detached: true })
  strays.push(proc.pid)
  return proc.pid
}

test.each([
  ["no start time (an old record)", (pid: number) => ({ start: undefined, pid })],
  ["another start time (a reused PID)", (pid: number) => ({ start: "other-boot:1", pid })],
])("a stale record naming an unrelated opencode-serve-like process (%s) never gets it signalled", async (_, shape) => {
  const real = (await readServerRecord(world.home.paths))!
  const pid = lookalike()
  await Bun.sleep(200)
  const fake: ServerRecord = { ...real, ...shape(pid), url: "http://127.0.0.1:9" }
  await writeJson(world.home.paths.serverFile, fake, 0o600)
  const record = await ensureServer({ paths: world.home.paths, binary: world.home.env.OPENCODE_MCP_ORCHESTRATOR_OPENCODE ?? "opencode", env: world.home.env })
  expect(record.pid).not.toBe(pid)
  expect(alive(pid)).toBe(true)
  expect(record.start).toBe(processStart(record.pid))
  strays.push(record.pid)
}, 60_000)

test("a record whose password the server refuses is left alone (not killed); a new server is started", async () => {
  const real = (await readServerRecord(world.home.paths))!
  await writeJson(world.home.paths.serverFile, { ...real, password: "wrong" }, 0o600)
  expect(await probeServer({ ...real, password: "wrong" })).toBe("foreign")
  const record = await ensureServer({ paths: world.home.paths, binary: "opencode", env: world.home.env })
  expect(record.pid).not.toBe(real.pid)
  expect(alive(real.pid)).toBe(true)
  strays.push(real.pid, record.pid)
  // The next delegation works on the new server.
  const repo = await makeRepo(world)
  const fresh = await connect(world, {}, "third-client")
  try {
    expect(structured(await scout(fresh, repo, "quick")).status).toBe("succeeded")
  } finally {
    await fresh.close()
  }
}, 60_000)
