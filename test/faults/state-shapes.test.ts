// One bad state file never breaks a listing or a sum for the others. Each bad shape of a task record
// (a result without tokens, null tokens, a string cost, dates that do not parse) and of a patch record
// ({}, null, an array, no source), plus truncated JSON, a directory, a symlink to /dev/zero and a FIFO
// in a record's place, is planted beside a real finished task: task_list, stats (MCP tool and CLI),
// task_status of the good task and doctor all answer for it; the bad file is named once and set aside.
// Controls: the same listings with only good files report nothing, and each planted record does break
// the unprotected readers (the ledger's sum, task_status's elapsed time) when fed to them raw.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync, lstatSync } from "node:fs"
import { mkdir, readdir, rm, symlink, writeFile } from "node:fs/promises"
import { resolve } from "node:path"
import { readFlags } from "../../src/config/flags"
import { runDoctor } from "../../src/doctor/run"
import { stateFiles } from "../../src/doctor/state-files"
import type { DoctorContext } from "../../src/doctor/check"
import { summarize } from "../../src/engine/ledger/ledger"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { clientHomes } from "../../src/install/homes"
import { statusOfRecord } from "../../src/mcp/tools/task_status"
import * as engine from "../../src/engine"
import { LAUNCHERS } from "../../src/sandbox"
import { run } from "../../src/util/process"
import { connect, makeRepo, startWorld, stopWorld, structured, type Connected, type World } from "../mcp/_setup"

const MAIN = resolve(import.meta.dir, "../../src/cli/main.ts")

let world: World
let mcp: Connected
let good: Record<string, unknown>
let goodId: string

beforeAll(async () => {
  world = await startWorld({ quick: { turns: [{ steps: [{ text: "quick report" }] }] } })
  mcp = await connect(world)
  const repo = await makeRepo(world)
  const first = structured(
    await mcp.client.callTool({ name: "scout", arguments: { cwd: repo, task: "[script:quick] look" } }),
  )
  expect(first.status).toBe("succeeded")
  goodId = String(first.task_id)
  good = JSON.parse(await Bun.file(`${world.home.paths.tasksDir}/${goodId}.json`).text())
}, 120_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

type SetAsideRow = { path: string; moved_to: string; reason: string }
const call = async (name: string, args: Record<string, unknown> = {}) => mcp.client.callTool({ name, arguments: args })
const BAD_TASK = "task_aaaaaaaa_0000bad1"
const BAD_PATCH = "patch_aaaaaaaa_0000bad1"
const result = () => good.result as Record<string, unknown>

/** A hand-made patch record of a worker waiting for review, as task_list lists it. */
const patchRecord = (id: string) => ({
  version: 1,
  id,
  status: "ready",
  createdAt: new Date().toISOString(),
  layout: { dir: `/nonexistent/${id}`, tree: `/nonexistent/${id}/tree`, gitDir: `/nonexistent/${id}/git` },
  source: { workspace: "/nonexistent/repo", root: "/nonexistent/repo", gitDir: "/nonexistent/repo/.git" },
  base: "0".repeat(40),
  digest: "d",
  files: [],
  bytes: 10,
})

const record = (change: Record<string, unknown>) => JSON.stringify({ ...good, id: BAD_TASK, ...change })
const withResult = (change: Record<string, unknown>) => record({ result: { ...result(), ...change } })

type Plant = (file: string) => Promise<void>
const text =
  (content: () => string): Plant =>
  (file) =>
    writeFile(file, content())
const PLANTS: Record<string, Plant> = {
  "truncated JSON": (file) => writeFile(file, record({}).slice(0, 200)),
  "a directory": (file) => mkdir(file),
  "a symlink to /dev/zero": (file) => symlink("/dev/zero", file),
  "a FIFO": async (file) => {
    expect((await run(["mkfifo", file])).code).toBe(0)
  },
}

const TASK_SHAPES: Record<string, Plant> = {
  "a result without tokens": (file) =>
    writeFile(
      file,
      record({ result: Object.fromEntries(Object.entries(result()).filter(([key]) => key !== "tokens")) }),
    ),
  "a result with tokens null": text(() => withResult({ tokens: null })),
  "a result with a string cost": text(() => withResult({ cost: "0.25" })),
  "a createdAt that is not a date": text(() => record({ createdAt: "yesterday" })),
  "a finishedAt that is not a date": text(() => record({ finishedAt: "soon" })),
  ...PLANTS,
}

const PATCH_SHAPES: Record<string, Plant> = {
  "{}": text(() => "{}"),
  null: text(() => "null"),
  "an array": text(() => "[]"),
  "a record without source": text(() =>
    JSON.stringify(Object.fromEntries(Object.entries(patchRecord(BAD_PATCH)).filter(([key]) => key !== "source"))),
  ),
  garbage: text(() => "\u0000\u0001 not a record"),
  ...PLANTS,
}

async function cliStats(): Promise<{ total: { tasks: number }; stderr: string; code: number | null }> {
  const out = await run([process.execPath, MAIN, "stats", "--json"], { env: world.home.env, timeoutMs: 60_000 })
  return { ...(out.code === 0 ? JSON.parse(out.stdout) : { total: { tasks: -1 } }), stderr: out.stderr, code: out.code }
}

const doctorCheck = async () => (await stateFiles({ paths: world.home.paths } as DoctorContext))[0]!

/** Removes what a test moved aside, so the next one starts from good files only. */
async function sweep() {
  for (const dir of [world.home.paths.tasksDir, world.home.paths.patchesDir])
    for (const name of await readdir(dir).catch(() => [] as string[]))
      if (name.includes("bad1")) await rm(`${dir}/${name}`, { recursive: true, force: true })
}

async function expectAnswersForOthers(file: string, listedFirst: "task_list" | "stats") {
  // The first listing names the bad file once, with a reason; the good task is there.
  const first = structured(await call(listedFirst))
  const named = (listedFirst === "task_list" ? first.corrupt_files : first.set_aside) as SetAsideRow[] | undefined
  expect(named?.filter((row) => row.path === file)).toHaveLength(1)
  expect(named?.[0]?.reason).toBeTruthy()
  expect(existsSync(named![0]!.moved_to)).toBe(true)
  expect(() => lstatSync(file)).toThrow() // set aside: its name is free
  // Every listing afterwards answers for the good task, and names the file no more.
  const listed = structured(await call("task_list"))
  expect((listed.tasks as { task_id: string }[]).map((t) => t.task_id)).toContain(goodId)
  expect(listed.corrupt_files).toBeUndefined()
  const stats = await call("stats")
  expect(stats.isError).toBeFalsy()
  expect((structured(stats).total as { tasks: number }).tasks).toBeGreaterThanOrEqual(1)
  expect(structured(stats).set_aside).toBeUndefined()
  expect(structured(await call("task_status", { task_id: goodId })).status).toBe("succeeded")
  const cli = await cliStats()
  expect(cli.code).toBe(0)
  expect(cli.total.tasks).toBeGreaterThanOrEqual(1)
  // Doctor names the file (moved by another process) until it is deleted.
  const check = await doctorCheck()
  expect(check.status).toBe("fail")
  expect(check.detail).toContain(file)
}

for (const [shape, plant] of Object.entries(TASK_SHAPES))
  test(`a task record that is ${shape} is set aside; the listings, stats and doctor answer for the others`, async () => {
    const file = `${world.home.paths.tasksDir}/${BAD_TASK}.json`
    await plant(file)
    await expectAnswersForOthers(file, shape.includes("cost") || shape.includes("tokens") ? "stats" : "task_list")
    await sweep()
  }, 60_000)

for (const [shape, plant] of Object.entries(PATCH_SHAPES))
  test(`a patch record that is ${shape} is set aside; task_list lists the good patch, and doctor names the bad one`, async () => {
    await mkdir(world.home.paths.patchesDir, { recursive: true })
    const file = `${world.home.paths.patchesDir}/${BAD_PATCH}.json`
    await writeFile(
      `${world.home.paths.patchesDir}/patch_aaaaaaaa_0000900d.json`,
      JSON.stringify(patchRecord("patch_aaaaaaaa_0000900d")),
    )
    await plant(file)
    const listed = structured(await call("task_list"))
    expect((listed.patches as { patch_id: string }[]).map((p) => p.patch_id)).toEqual(["patch_aaaaaaaa_0000900d"])
    expect((listed.corrupt_files as SetAsideRow[]).filter((row) => row.path === file)).toHaveLength(1)
    expect(structured(await call("task_list")).corrupt_files).toBeUndefined()
    const check = await doctorCheck()
    expect(check.detail).toContain(file)
    await rm(`${world.home.paths.patchesDir}/patch_aaaaaaaa_0000900d.json`)
    await sweep()
  }, 60_000)

test("doctor reads the records itself: a bad one found first by doctor is named with its reason, and a listing does not name it again", async () => {
  const file = `${world.home.paths.tasksDir}/${BAD_TASK}.json`
  await writeFile(file, withResult({ tokens: null }))
  const deps = {
    paths: world.home.paths,
    homes: clientHomes(readFlags(world.home.env)),
    launchers: LAUNCHERS,
    run,
    opencode: "opencode",
    env: world.home.env,
    probes: async () => [],
  }
  const report = await runDoctor(deps, { sandboxProbes: false, live: false })
  const check = report.checks.find((c) => c.id === "state-files")!
  expect(check.status).toBe("fail")
  expect(check.detail).toContain(
    `${file} (moved to ${file}.corrupt: it does not have the expected shape (result.tokens`,
  )
  expect(check.fix).toContain("delete it")
  expect(structured(await call("task_list")).corrupt_files).toBeUndefined()
  await sweep()
  expect((await doctorCheck()).status).toBe("pass")
}, 120_000)

test("control: with only good files nothing is set aside, and every listing answers", async () => {
  await sweep()
  const listed = structured(await call("task_list"))
  expect((listed.tasks as { task_id: string }[]).map((t) => t.task_id)).toContain(goodId)
  expect(listed.corrupt_files).toBeUndefined()
  expect(structured(await call("stats")).set_aside).toBeUndefined()
  expect((await cliStats()).total.tasks).toBeGreaterThanOrEqual(1)
  expect(await doctorCheck()).toMatchObject({ status: "pass" })
  expect((await readdir(world.home.paths.tasksDir)).filter((name) => name.includes(".corrupt"))).toEqual([])
})

test("control: each planted record breaks the unprotected readers it would have reached", () => {
  const raw = (text: string) => JSON.parse(text) as TaskRecord
  expect(() => summarize([raw(record({ result: { ...result(), tokens: undefined } }))])).toThrow()
  expect(() => summarize([raw(withResult({ tokens: null }))])).toThrow()
  expect(typeof summarize([raw(withResult({ cost: "0.25" }))]).total.cost).toBe("string")
  expect(statusOfRecord(engine, raw(record({ createdAt: "yesterday" }))).elapsed_ms).toBeNaN()
  expect(statusOfRecord(engine, raw(record({ finishedAt: "soon" }))).elapsed_ms).toBeNaN()
  expect(summarize([raw(JSON.stringify(good))]).total.tasks).toBe(1)
})
