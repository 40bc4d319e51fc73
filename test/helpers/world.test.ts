// A world hands a later test the path of an earlier test's repository, made anew, only when nothing of the
// earlier test works there and nothing the home keeps names it (helpers/world.ts `repository`). Each test
// below is one step of a sequence; the world has a home but no OpenCode server (none is started).
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { taskRecord } from "./records"
import { type HomeWorld, repository, startHome, stopHome } from "./world"

let world: HomeWorld
let fromBeforeAll = ""
const seen: string[] = []

const make = async (dir: string) => {
  writeFileSync(`${dir}/README.md`, "# r\n")
}
const repo = (options?: { unseen?: boolean }) => repository(world, "oc-orch-world-", make, options)

beforeAll(async () => {
  world = await startHome({})
  fromBeforeAll = await repo()
})

afterAll(() => stopHome(world))

test("control: a first test's two repositories are two new paths", async () => {
  const first = await repo()
  const second = await repo()
  await Bun.write(`${first}/left-behind`, "x")
  seen.push(first, second)
  expect(first).not.toBe(second)
  expect(seen).not.toContain(fromBeforeAll)
})

test("the next test gets those paths again, made anew: nothing the earlier test left is there", async () => {
  const again = [await repo(), await repo()]
  expect(again.sort()).toEqual([...seen].sort())
  for (const dir of again) {
    expect(existsSync(`${dir}/left-behind`)).toBe(false)
    expect(existsSync(`${dir}/README.md`)).toBe(true)
  }
  // A third is new: the one made in beforeAll, which later tests still use, is never handed on.
  const third = await repo()
  expect([...seen, fromBeforeAll]).not.toContain(third)
  seen.push(third)
})

test("unseen: a path no test had, though three are free", async () => {
  expect(seen).not.toContain(await repo({ unseen: true }))
})

test("attack: a path an unfinished task names (or a directory in it) is not taken", async () => {
  const [running, inside] = seen
  mkdirSync(world.home.paths.tasksDir, { recursive: true })
  for (const [id, workspace] of [
    ["t_running", running],
    ["t_inside", `${inside}/pkg`],
  ] as const)
    writeFileSync(
      `${world.home.paths.tasksDir}/${id}.json`,
      JSON.stringify(taskRecord({ id, workspace, status: "running" })),
    )
  const taken = [await repo(), await repo(), await repo()]
  expect(taken).not.toContain(running)
  expect(taken).not.toContain(inside)
  expect(taken).toContain(String(seen[2]))
})

test("attack: a path the home remembers markers of, or a lock names, is not taken; a finished task's path is", async () => {
  const ended = [...world.ended]
  const [first, second, third] = ended.filter((dir) => seen.includes(dir)).sort()
  mkdirSync(world.home.paths.modesDir, { recursive: true })
  mkdirSync(world.home.paths.locksDir, { recursive: true })
  writeFileSync(`${world.home.paths.modesDir}/m.json`, JSON.stringify({ directory: first }))
  writeFileSync(`${world.home.paths.locksDir}/l.json`, JSON.stringify({ workspace: second }))
  for (const name of ["t_running", "t_inside"])
    writeFileSync(
      `${world.home.paths.tasksDir}/${name}.json`,
      JSON.stringify(taskRecord({ id: name, workspace: third ?? "/nowhere", status: "succeeded" })),
    )
  const taken = await repo()
  expect(taken).not.toBe(first)
  expect(taken).not.toBe(second)
  if (third) expect(taken).toBe(third)
  expect(statSync(taken).isDirectory()).toBe(true)
})

test("attack: while a task record is garbage (a test planted it), no path is taken, and no error", async () => {
  const free = [...world.ended]
  writeFileSync(`${world.home.paths.tasksDir}/t_garbage.json`, "{ not json")
  const taken = await repo()
  expect(free).not.toContain(taken)
  rmSync(`${world.home.paths.tasksDir}/t_garbage.json`)
  // Control: the garbage gone, a free path is taken again.
  expect(free).toContain(await repo())
})

test("attack: a recorded server that does not answer (a test killed it): a new path, and no error", async () => {
  const free = [...world.ended]
  const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") })
  const url = `http://127.0.0.1:${closed.port}`
  await closed.stop(true)
  const record = { pid: 1, url, username: "u", password: "p", version: "0", binary: "opencode", startedAt: "" }
  writeFileSync(world.home.paths.serverFile, JSON.stringify(record))
  const taken = await repo()
  expect(free).not.toContain(taken)
  rmSync(world.home.paths.serverFile)
  // Control: no server recorded, a free path is taken again.
  expect(free).toContain(await repo())
})
