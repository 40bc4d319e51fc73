// The shared server's instances released once their directory rests, through the real OpenCode on the
// scripted model: an idle directory's instance goes and the next delegation there still works; one with
// a running session (this process's turn, or a session nobody here holds) is never released; and serve's
// memory, threads and fds after ten directories come back to about one directory's.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { instancesToRelease } from "../../src/engine/instance-plan"
import { disposeInstance, sessionRunningIn } from "../../src/opencode/instances"
import { readServerRecord } from "../../src/opencode/server"
import { front, makeRepo, runAgent, startWorld, stopWorld, structuredOf, type Front, type World } from "../escape/_world"
import { footprint } from "../helpers/footprint"

const read = (filePath: string) => ({ tool: "read", args: { filePath } })
const SLOW_MS = 8000

describe("instancesToRelease", () => {
  const use = (directory: string, lastUsedMs: number, holds = 0) => ({ directory, lastUsedMs, holds })
  test.each([
    ["idle past the limit", [use("a", 0), use("b", 900)], 1000, { idleMs: 500, maxLive: 8 }, ["a"]],
    ["a held one is never chosen, however old", [use("a", 0, 1)], 1_000_000, { idleMs: 1, maxLive: 8 }, []],
    ["beyond the bound, least recently used first", [use("c", 30), use("a", 10), use("b", 20)], 40, { idleMs: 1000, maxLive: 1 }, ["a", "b"]],
    ["held ones count against the bound but stay", [use("a", 10, 1), use("b", 20), use("c", 30)], 40, { idleMs: 1000, maxLive: 1 }, ["b", "c"]],
    ["within every limit", [use("a", 10)], 20, { idleMs: 1000, maxLive: 1 }, []],
  ] as const)("%s", (_name, uses, now, limits, expected) => {
    expect(instancesToRelease([...uses], now, limits)).toEqual([...expected])
  })
})

describe("instances on the real OpenCode", () => {
  let world: World
  let mcp: Front

  beforeAll(async () => {
    world = await startWorld({
      read_readme: { turns: [{ steps: [read("README.md"), { text: "report: {{toolOutputs}}" }] }] },
      slow: { turns: [{ steps: [{ text: "late", delayMs: SLOW_MS }] }] },
    })
    mcp = await front(world)
    const { client: connected } = await world.runtime.opencode()
    client = () => connected
  }, 120_000)

  afterAll(async () => {
    await mcp?.close()
    await stopWorld(world)
  })

  const scout = async (cwd: string) => structuredOf(await mcp.call("scout", { cwd, task: "[script:read_readme] read" })).status
  const setConfig = (extra: Record<string, unknown>) => Bun.write(world.home.paths.configFile, JSON.stringify({ version: 1, ...extra }))
  let client: () => OpencodeClient
  const disposed = (directory: string) =>
    new Promise<void>((resolve) => {
      const off = world.runtime.current()?.hub.onAny((event) => {
        if (event.type === "server.instance.disposed" && event.properties.directory === directory) {
          off?.()
          resolve()
        }
      })
    })

  test("an idle directory's instance is released by the sweep, and the next delegation there still works", async () => {
    const repo = await makeRepo(world)
    await setConfig({ instanceIdleSeconds: 1 })
    expect(await scout(repo)).toBe("succeeded")
    expect(world.runtime.instances.live()).toContain(repo)
    // Released by the process's own timer, seen as the server's event.
    await disposed(repo)
    expect(world.runtime.instances.live()).not.toContain(repo)
    expect(await scout(repo)).toBe("succeeded")
  }, 60_000)

  test("control: within the idle time (default 120 s) nothing is released", async () => {
    const repo = await makeRepo(world)
    await setConfig({})
    expect(await scout(repo)).toBe("succeeded")
    expect(await world.runtime.instances.sweep()).toEqual([])
    expect(world.runtime.instances.live()).toContain(repo)
  }, 60_000)

  test("a directory with a running session is never released: not by idle time, the bound, or a leaving process", async () => {
    await setConfig({ instanceIdleSeconds: 1, maxLiveInstances: 1 })
    const ours = await makeRepo(world)
    const theirs = await makeRepo(world)
    // Our turn (held), and a session this process does not hold (another client's, on the shared server).
    const ourCall = mcp.call("scout", { cwd: ours, task: "[script:slow] wait" })
    const theirRun = runAgent(world, "opencode-orchestrator-scout", theirs, "slow")
    world.runtime.instances.touch(theirs)
    for (let i = 0; i < 100 && !((await sessionRunningIn(client(), ours).catch(() => false)) && (await sessionRunningIn(client(), theirs))); i++) await Bun.sleep(100)
    expect(await sessionRunningIn(client(), theirs)).toBe(true)
    const farFuture = Date.now() + 86_400_000
    expect(await world.runtime.instances.sweep(farFuture)).not.toContain(ours)
    expect(await world.runtime.instances.sweep(farFuture)).not.toContain(theirs)
    expect(await world.runtime.releaseInstances([ours, theirs])).toEqual([])
    expect((await theirRun).turn.outcome.kind).toBe("idle")
    expect(structuredOf(await ourCall).status).toBe("succeeded")
    // Once they rest, both go.
    expect((await world.runtime.releaseInstances([ours, theirs])).sort()).toEqual([ours, theirs].sort())
  }, 90_000)

  test("control: the unguarded call disposes under a running session; that session's turn still ends", async () => {
    const repo = await makeRepo(world)
    let ended = false
    const running = runAgent(world, "opencode-orchestrator-scout", repo, "slow").finally(() => (ended = true))
    for (let i = 0; i < 100 && !(await sessionRunningIn(client(), repo)); i++) await Bun.sleep(100)
    const seen = disposed(repo)
    // What the sweep would do without the status check, or another process's sweep racing a prompt.
    await disposeInstance(client(), repo)
    await seen
    expect(ended).toBe(false)
    expect((await running).turn.outcome.kind).toBe("idle")
  }, 60_000)

  test("serve's memory, threads and fds after ten directories come back to about one's once released", async () => {
    await setConfig({})
    const pid = (await readServerRecord(world.home.paths))?.pid as number
    await world.runtime.releaseInstances()
    const first = await makeRepo(world)
    expect(await scout(first)).toBe("succeeded")
    const one = await footprint(pid)
    const repos = [first]
    for (let i = 1; i < 10; i++) repos.push(await makeRepo(world))
    for (const repo of repos.slice(1)) expect(await scout(repo)).toBe("succeeded")
    const ten = await footprint(pid)
    const released = await world.runtime.releaseInstances(repos.slice(1))
    expect(released.length).toBe(9)
    await Bun.sleep(1000)
    const after = await footprint(pid)
    console.log(JSON.stringify({ one, ten, after }))
    // The control: without release the ten directories cost threads and fds.
    expect(ten.threads).toBeGreaterThanOrEqual(one.threads + 9)
    expect(after.threads).toBeLessThanOrEqual(one.threads + 2)
    expect(after.fds).toBeLessThanOrEqual(one.fds + 3)
    expect(after.rssMb).toBeLessThanOrEqual(one.rssMb * 1.3)
  }, 180_000)
})
