// The shared server restarted once it rests with its memory past serverRecycleMb, through the real
// OpenCode on the scripted model: the sweep of a process left with no directory restarts it and the next
// delegation runs on a fresh one; never while a turn of any process is marked, a task is unfinished, or
// a session was updated within the rest window; a turn starting during a restart waits and runs on the
// new server; and the stop touches only the server the record still names (never a foreign process).
import { describe, expect, test } from "bun:test"
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { InstanceMarks } from "../../src/engine/capacity/instance-marks"
import { recycleIfRested, type RecycleLimits } from "../../src/engine/capacity/recycle"
import { readServerRecord, stopServerIfRecorded, type ServerRecord } from "../../src/opencode/server"
import { writeJson } from "../../src/util/fs"
import { alive } from "../../src/util/process"
import { makeRepo, structuredOf } from "../escape/_world"
import { serverWorld } from "./_server-world"
import { until } from "../helpers/until"

const SLOW_MS = 6000
/** A limit every server is over, so only rest decides. */
const ANY_SIZE = 1

describe("recycling the shared server on the real OpenCode", () => {
  const { world, mcp } = serverWorld(SLOW_MS)

  // The process's own sweep stays out of the direct checks below: nothing rests for an hour.
  const setConfig = (extra: Record<string, unknown>) =>
    Bun.write(world.home.paths.configFile, JSON.stringify({ version: 1, instanceIdleSeconds: 3600, ...extra }))
  const scout = async (cwd: string, script = "read_readme") =>
    structuredOf(await mcp.call("scout", { cwd, task: `[script:${script}] go` })).status
  /** How many OpenCode sessions the task's turns took: a turn cut by a server going away starts another. */
  const sessionsOf = async (taskId: string) =>
    (JSON.parse(await Bun.file(`${world.home.paths.tasksDir}/${taskId}.json`).text()) as { sessions: string[] })
      .sessions.length
  const server = async () => (await readServerRecord(world.home.paths)) as ServerRecord
  const marks = (dir = world.home.paths.instancesDir) => new InstanceMarks(dir)
  /** The engine's check on this process's connection with the limits given, the store and marks as the product's. */
  const check = async (limits: RecycleLimits, options: { marksDir?: string } = {}) =>
    recycleIfRested({
      connection: () => world.runtime.current(),
      limits: async () => limits,
      marks: marks(options.marksDir),
      tasksRest: () => world.runtime.tasksRest(),
      stop: (record) => stopServerIfRecorded(world.home.paths, record),
    })
  /** Connected again (after a restart) with a delegation that succeeds; the server it ran on. */
  const delegateAgain = async () => {
    expect(await scout(await makeRepo(world))).toBe("succeeded")
    return server()
  }

  test("a rested server past the limit is restarted by the sweep, and the next delegation runs on a new one", async () => {
    await setConfig({ instanceIdleSeconds: 1, serverRecycleMb: ANY_SIZE })
    const repo = await makeRepo(world)
    expect(await scout(repo)).toBe("succeeded")
    const before = await server()
    // The sweep releases the directory after a second, then finds the process with none and the server rested.
    // The stop ends after the process does: its record is forgotten and the connection dropped last.
    const stopped = async () =>
      !alive(before.pid) && (await readServerRecord(world.home.paths)) === undefined && !world.runtime.current()
    await until(stopped, 30_000)
    expect(alive(before.pid)).toBe(false)
    expect(await readServerRecord(world.home.paths)).toBeUndefined()
    expect(world.runtime.current()).toBeUndefined()
    const after = await delegateAgain()
    expect(after.pid).not.toBe(before.pid)
    // The directory used before the restart works on the new server too.
    expect(await scout(repo)).toBe("succeeded")
  }, 90_000)

  test("control: with serverRecycleMb 0, or a server under the limit, the same rest restarts nothing", async () => {
    await setConfig({ instanceIdleSeconds: 1, serverRecycleMb: 0 })
    expect(await scout(await makeRepo(world))).toBe("succeeded")
    const before = await server()
    // Longer than the sweep took above: released, checked, and left running.
    await Bun.sleep(13_000)
    expect(world.runtime.instances.live()).toEqual([])
    expect(alive(before.pid)).toBe(true)
    expect((await server()).pid).toBe(before.pid)
    expect(await check({ recycleMb: 0, restMs: 0 })).toBe("off")
    expect(await check({ recycleMb: 1_000_000, restMs: 0 })).toBe("small")
    expect(alive(before.pid)).toBe(true)
  }, 90_000)

  test("never while a turn runs (its use mark) or a task is unfinished; once it ends, restarted", async () => {
    await setConfig({ serverRecycleMb: ANY_SIZE })
    const repo = await makeRepo(world)
    const running = mcp.call("scout", { cwd: repo, task: "[script:slow] wait" })
    const before = await server()
    // Until the turn holds its directory (its mark is written before the session is created).
    for (let i = 0; i < 100 && !(await hasUseMark()); i++) await Bun.sleep(50)
    expect(await check({ recycleMb: ANY_SIZE, restMs: 0 })).toBe("busy")
    // The store's verdict alone (no marks to see, as if the turn had not marked yet) keeps it too.
    const noMarks = await mkdtemp(`${tmpdir()}/oc-orch-no-marks-`)
    try {
      expect(await check({ recycleMb: ANY_SIZE, restMs: 0 }, { marksDir: noMarks })).toBe("busy")
    } finally {
      await rm(noMarks, { recursive: true, force: true })
    }
    expect(structuredOf(await running).status).toBe("succeeded")
    expect(alive(before.pid)).toBe(true)
    expect(await check({ recycleMb: ANY_SIZE, restMs: 0 })).toBe("recycled")
    expect(alive(before.pid)).toBe(false)
    expect((await delegateAgain()).pid).not.toBe(before.pid)
  }, 90_000)

  test("another process's use mark keeps the server; the same mark of a dead process does not", async () => {
    await setConfig({ serverRecycleMb: ANY_SIZE })
    const before = await delegateAgain()
    const other = Bun.spawn(["sleep", "60"])
    const dead = Bun.spawn(["true"])
    await dead.exited
    const dir = world.home.paths.instancesDir
    await mkdir(dir, { recursive: true })
    const mark = `${dir}/${"ab".repeat(16)}.use`
    try {
      await writeFile(`${mark}.${other.pid}.0`, "")
      expect(await check({ recycleMb: ANY_SIZE, restMs: 0 })).toBe("busy")
      expect(alive(before.pid)).toBe(true)
    } finally {
      other.kill()
      await other.exited
    }
    // Garbage in the marks directory counts for nothing.
    await writeFile(`${dir}/garbage`, "x")
    await writeFile(`${dir}/${"0".repeat(32)}.release.notapid.0`, "")
    await writeFile(`${mark}.${dead.pid}.0`, "")
    expect(await check({ recycleMb: ANY_SIZE, restMs: 0 })).toBe("recycled")
    expect(alive(before.pid)).toBe(false)
    await delegateAgain()
  }, 90_000)

  test("a session updated within the rest window keeps the server (anyone's, on any directory)", async () => {
    await setConfig({ serverRecycleMb: ANY_SIZE })
    const before = await delegateAgain()
    const { client } = await world.runtime.opencode()
    // A session nobody here delegated: another client of the shared server, just now.
    expect((await client.session.create({ directory: await makeRepo(world), title: "theirs" })).data).toBeDefined()
    expect(await check({ recycleMb: ANY_SIZE, restMs: 60_000 })).toBe("busy")
    expect(alive(before.pid)).toBe(true)
    // Control: the same server, a rest window the session is older than.
    await Bun.sleep(200)
    expect(await check({ recycleMb: ANY_SIZE, restMs: 100 })).toBe("recycled")
    expect(alive(before.pid)).toBe(false)
    await delegateAgain()
  }, 90_000)

  test("attack: a delegation starting while the server is being stopped waits, then runs whole on the new server", async () => {
    await setConfig({ serverRecycleMb: ANY_SIZE })
    const before = await delegateAgain()
    const repo = await makeRepo(world)
    let stopping!: () => void
    const stopStarted = new Promise<void>((resolve) => (stopping = resolve))
    const recycling = recycleIfRested({
      connection: () => world.runtime.current(),
      limits: async () => ({ recycleMb: ANY_SIZE, restMs: 0 }),
      marks: marks(),
      tasksRest: async () => true,
      // A slow stop: the server is still up for two seconds after the release mark is down.
      stop: async (record) => {
        stopping()
        await Bun.sleep(2000)
        return stopServerIfRecorded(world.home.paths, record)
      },
    })
    await stopStarted
    const result = structuredOf(await mcp.call("scout", { cwd: repo, task: "[script:read_readme] go" }))
    expect(await recycling).toBe("recycled")
    expect(result.status).toBe("succeeded")
    // One session: the turn began after the stop, not across it.
    expect(await sessionsOf(String(result.task_id))).toBe(1)
    expect((await server()).pid).not.toBe(before.pid)
  }, 90_000)

  test("control: the same stop with no release mark cuts a delegation running across it (a second session, or a failure)", async () => {
    await setConfig({ serverRecycleMb: ANY_SIZE })
    const before = await delegateAgain()
    const running = mcp.call("scout", { cwd: await makeRepo(world), task: "[script:slow] wait" })
    for (let i = 0; i < 100 && !(await hasUseMark()); i++) await Bun.sleep(50)
    await Bun.sleep(500)
    expect(await stopServerIfRecorded(world.home.paths, before)).toBe(true)
    const result = structuredOf(await running)
    // The engine recovers from a server that went away by starting the turn again on a new one, if it can.
    if (result.status === "succeeded") expect(await sessionsOf(String(result.task_id))).toBeGreaterThanOrEqual(2)
    await delegateAgain()
  }, 90_000)

  test("the stop leaves a process the record no longer names, or one that is not provably the server", async () => {
    const current = await delegateAgain()
    const foreign = Bun.spawn(["sleep", "60"])
    try {
      // A record naming a live process that is not `opencode serve` (a reused PID): never signalled.
      const impostor = { ...current, pid: foreign.pid }
      await writeJson(world.home.paths.serverFile, impostor, 0o600)
      expect(await stopServerIfRecorded(world.home.paths, impostor)).toBe(false)
      expect(alive(foreign.pid)).toBe(true)
      await writeJson(world.home.paths.serverFile, current, 0o600)
      // A server the record no longer names (another process replaced it): left alone too.
      expect(await stopServerIfRecorded(world.home.paths, { ...current, password: "other" })).toBe(false)
      expect(alive(current.pid)).toBe(true)
      expect((await server()).pid).toBe(current.pid)
    } finally {
      foreign.kill()
      await foreign.exited
    }
  }, 60_000)

  test("a restart's mark holds a starting turn back while its process lives; a SIGKILLed restarter's does not", async () => {
    const dir = await mkdtemp(`${tmpdir()}/oc-orch-marks-`)
    const live = Bun.spawn(["sleep", "60"])
    const dead = Bun.spawn(["true"])
    await dead.exited
    const serverRelease = (pid: number) => `${dir}/${"0".repeat(32)}.release.${pid}.0`
    try {
      await writeFile(serverRelease(dead.pid), "")
      // A live one would hold it for good (the control below): getting the use at all is the answer.
      await (await marks(dir).use("/some/repo"))()
      // Control: the same mark of a live process keeps the use waiting until it goes.
      await writeFile(serverRelease(live.pid), "")
      let granted = false
      const using = marks(dir)
        .use("/some/repo")
        .then((release) => {
          granted = true
          return release
        })
      // The use looks again and again meanwhile (every POLL_MS); while the mark lives, none lets it through.
      await Bun.sleep(600)
      expect(granted).toBe(false)
      await rm(serverRelease(live.pid))
      await (await using)()
      expect(granted).toBe(true)
    } finally {
      live.kill()
      await live.exited
      await rm(dir, { recursive: true, force: true })
    }
  })

  async function hasUseMark() {
    return (await readdir(world.home.paths.instancesDir).catch(() => [] as string[])).some((name) =>
      name.includes(".use."),
    )
  }
})
