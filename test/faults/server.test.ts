// The shared server under faults, on the real OpenCode: a stalled server (SIGSTOP) is waited out, not
// killed, and the work on it finishes; a stale record never gets an unrelated process signalled; a
// record whose password the server does not take is left alone and a new server started; a server killed
// under a delegation gives a rerun, and one killed at any read of its start (the event stream, the plugin's
// tool ids, the model catalog) has that read decided on its successor, while a live server without our
// plugin for a directory refuses it.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { readServerRecord, probeServer, ensureServer, type ServerRecord } from "../../src/opencode/server"
import { alive, processStart, spawn } from "../../src/util/process"
import { writeJson } from "../../src/util/fs"
import { readFlags } from "../../src/config/flags"
import { Runtime, type ServerRead } from "../../src/engine/capacity/runtime"
import { serveInProcess } from "../helpers/in-process"
import { until } from "../helpers/until"
import { connect, makeRepo, startWorld, stopWorld, structured, type Connected, type World } from "../mcp/_setup"

let world: World
let first: Connected
let second: Connected
const strays: number[] = []

beforeAll(async () => {
  world = await startWorld({
    slow: { turns: [{ steps: [{ text: "slow report", delayMs: 4000 }] }] },
    quick: { turns: [{ steps: [{ text: "quick report" }] }] },
    edit_then_wait: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "kept.txt", content: "kept\n" } },
            { text: "late report", delayMs: 3_600_000 },
          ],
        },
      ],
    },
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

const scout = (mcp: Pick<Connected, "client">, cwd: string, script: string) =>
  mcp.client.callTool(
    { name: "scout", arguments: { cwd, task: `[script:${script}] look` } },
    {
      timeout: 120_000,
    },
  )

/** Waits until the scripted model is asked for `script` after its first `since` requests: that task's session runs. */
const sessionRunning = (script: string, since: number) =>
  until(
    () =>
      world.model
        .stepRequests()
        .slice(since)
        .some((request) => JSON.stringify(request.body).includes(`[script:${script}]`)),
    60_000,
  )

test("a server stalled for 8 s (SIGSTOP) is waited out by another process's call: same server, both tasks finish", async () => {
  const repo = await makeRepo(world)
  expect(structured(await scout(first, repo, "quick")).status).toBe("succeeded")
  const before = (await readServerRecord(world.home.paths))!
  const since = world.model.stepRequests().length
  const inFlight = scout(first, repo, "slow")
  expect(await sessionRunning("slow", since)).toBe(true)
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
  // `; :` keeps bash from exec-ing the sleep in its place, which would drop the borrowed name.
  const proc = spawn(["bash", "-c", "exec -a /opt/fake/opencode bash -c 'sleep 120; :' serve"], { detached: true })
  strays.push(proc.pid)
  return proc.pid
}

test.each([
  ["no start time (an old record)", (pid: number) => ({ start: undefined, pid })],
  ["another start time (a reused PID)", (pid: number) => ({ start: "other-boot:1", pid })],
])(
  "a stale record naming an unrelated opencode-serve-like process (%s) never gets it signalled",
  async (_, shape) => {
    const real = (await readServerRecord(world.home.paths))!
    strays.push(real.pid) // left running by the record swap below; stopped at the end
    const pid = lookalike()
    // Once its command line reads as `opencode serve` (the exec -a above); before that (or gone) it reads "".
    const cmdline = () =>
      Bun.file(`/proc/${pid}/cmdline`)
        .text()
        .catch(() => "")
    expect(await until(async () => (await cmdline()).includes("/opt/fake/opencode"), 30_000)).toBe(true)
    const fake: ServerRecord = { ...real, ...shape(pid), url: "http://127.0.0.1:9" }
    await writeJson(world.home.paths.serverFile, fake, 0o600)
    const record = await ensureServer({
      paths: world.home.paths,
      binary: world.home.env.OPENCODE_MCP_ORCHESTRATOR_OPENCODE ?? "opencode",
      env: world.home.env,
    })
    expect(record.pid).not.toBe(pid)
    expect(alive(pid)).toBe(true)
    expect(record.start).toBe(processStart(record.pid))
    strays.push(record.pid)
  },
  60_000,
)

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
  // The left-alone server was ours after all: stop it, so the connections here move to the recorded one.
  process.kill(real.pid, "SIGKILL")
}, 60_000)

/** Kills the server this connection works on (tests above leave several servers behind). */
const killServer = async (mcp: Connected) => {
  const { record } = await mcp.runtime.opencode()
  process.kill(record.pid, "SIGKILL")
  return record
}

test("a server killed under a worker: the task ends failed with server_lost within seconds, the edit kept, the workspace free", async () => {
  const repo = await makeRepo(world)
  // The report would come an hour later: a result at all is the server's loss told, not the session's end.
  const call = first.client.callTool(
    { name: "worker", arguments: { cwd: repo, task: "[script:edit_then_wait] edit" } },
    { timeout: 120_000 },
  )
  expect(await until(() => Bun.file(`${repo}/kept.txt`).exists(), 60_000)).toBe(true)
  const killed = await killServer(first)
  const result = structured(await call)
  expect(result.status).toBe("failed")
  expect(String(result.error)).toStartWith("server_lost")
  expect(String(result.next)).toContain("Edits made before the server stopped are kept")
  expect(await Bun.file(`${repo}/kept.txt`).text()).toBe("kept\n")
  expect(alive(killed.pid)).toBe(false)
  const { readdir } = await import("node:fs/promises")
  expect((await readdir(world.home.paths.locksDir)).filter((name) => name.endsWith(".json"))).toEqual([])
  // The next delegation in that workspace works, on a new server.
  expect(structured(await scout(first, repo, "quick")).status).toBe("succeeded")
}, 120_000)

test("a server killed under a scout: the scout runs again on a new server and succeeds", async () => {
  const repo = await makeRepo(world)
  const since = world.model.stepRequests().length
  const call = scout(first, repo, "slow")
  // Killed while the session runs, not during the start's reads (a timing race before).
  expect(await sessionRunning("slow", since)).toBe(true)
  const killed = await killServer(first)
  const result = structured(await call)
  strays.push((await first.runtime.opencode()).record.pid)
  expect(result.status).toBe("succeeded")
  expect(String(result.report)).toContain("slow report")
  expect((await first.runtime.opencode()).record.pid).not.toBe(killed.pid)
}, 120_000)

test("a live server without our plugin for a directory refuses the delegation; with it back, the same call runs", async () => {
  // OpenCode loads plugins per directory instance: a directory it has not seen yet reads the plugin dir afresh.
  const plugin = world.home.paths.opencodePluginFile
  const source = await Bun.file(plugin).text()
  const repo = await makeRepo(world, { unseen: true })
  const { rm } = await import("node:fs/promises")
  await rm(plugin)
  let refused: Awaited<ReturnType<typeof scout>>
  try {
    refused = await scout(first, repo, "quick")
  } finally {
    await Bun.write(plugin, source)
  }
  expect(refused.isError).toBe(true)
  expect(JSON.stringify(refused.content)).toContain("has not loaded this program's sandbox plugin")
  // Refused on a live server: no second check on a restarted one, and no task ran.
  expect(alive((await readServerRecord(world.home.paths))!.pid)).toBe(true)
  // Control: the instance that read no plugin is released, and the same call there runs sandboxed.
  const { record } = await first.runtime.opencode()
  await first.runtime.releaseInstances([repo])
  expect((await readServerRecord(world.home.paths))!.pid).toBe(record.pid)
  expect(structured(await scout(first, repo, "quick")).status).toBe("succeeded")
}, 120_000)

/**
 * An MCP connection whose runtime kills the shared server just before its `read`, the first `times` times
 * it comes to it: a server that dies at that point of a delegation's start, every time, not by chance.
 */
async function killingAt(read: ServerRead, times: number) {
  const killed: number[] = []
  const runtime = new Runtime(readFlags(world.home.env), {
    beforeRead: async (at, record) => {
      if (at !== read || killed.length >= times) return
      killed.push(record.pid)
      process.kill(record.pid, "SIGKILL")
      await until(() => !alive(record.pid), 10_000)
    },
  })
  const served = await serveInProcess(runtime, `killing-at-${read}`)
  return {
    client: served.client,
    killed,
    close: async () => {
      await served.close()
      runtime.close()
    },
  }
}

// Each read of a delegation's start (a new connection's event stream, the plugin's tool ids for a new
// directory, the model catalog) made against a server that dies under it: decided on its successor.
// Control: killed at the same read on the successor too, the scout fails with that read's own error (and
// there is no third try).
const READ_ERRORS: [ServerRead, string][] = [
  ["events", "OpenCode's event stream did not connect"],
  ["tool ids", "has not loaded this program's sandbox plugin"],
  ["catalog", "OpenCode did not return its model catalog"],
]
for (const [read, error] of READ_ERRORS) {
  test(`a server killed at the start's ${read} read: the scout is decided on its successor and succeeds`, async () => {
    const mcp = await killingAt(read, 1)
    try {
      const result = structured(await scout(mcp, await makeRepo(world), "quick"))
      const now = (await readServerRecord(world.home.paths))!
      strays.push(now.pid)
      expect(result.status).toBe("succeeded")
      expect(mcp.killed.length).toBe(1)
      expect(now.pid).not.toBe(mcp.killed[0])
    } finally {
      await mcp.close()
    }
  }, 120_000)

  test(`control: killed at the ${read} read on the successor too, the scout fails with that read's error`, async () => {
    const mcp = await killingAt(read, 2)
    try {
      const result = await scout(mcp, await makeRepo(world), "quick")
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain(error)
      expect(mcp.killed.length).toBe(2)
    } finally {
      await mcp.close()
    }
  }, 120_000)
}
