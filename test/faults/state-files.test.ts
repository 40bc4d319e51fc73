// State files that cannot wedge anything: a malformed task record or writer lock is moved aside to a
// named `.corrupt` sibling, reported once, and never blocks other tasks or the workspace; a lock whose
// owner is not provably alive (PID and start time) is reconciled. On the real OpenCode with the
// scripted model, so "the next delegation works" is a real delegation.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdir, readdir, writeFile } from "node:fs/promises"
import { selfStart } from "../../src/util/process"
import { connect, makeRepo, startWorld, stopWorld, structured, text, type Connected, type World } from "../mcp/_setup"

let world: World
let mcp: Connected

beforeAll(async () => {
  world = await startWorld({ quick: { turns: [{ steps: [{ text: "quick report" }] }] } })
  mcp = await connect(world)
}, 120_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

const call = async (name: string, args: Record<string, unknown>) => mcp.client.callTool({ name, arguments: args })
const lockFile = (workspace: string) =>
  `${world.home.paths.locksDir}/${createHash("sha256").update(workspace).digest("hex").slice(0, 32)}.json`

test("a malformed record and one answering for another task are moved aside; task_list and idempotency keys keep working", async () => {
  const repo = await makeRepo(world)
  const first = structured(
    await call("scout", { cwd: repo, task: "[script:quick] look", idempotency_key: "state-files-1" }),
  )
  expect(first.status).toBe("succeeded")
  const tasks = world.home.paths.tasksDir
  const good = JSON.parse(await Bun.file(`${tasks}/${first.task_id}.json`).text())
  // Valid JSON with a field missing, and a record whose inner id is another task's.
  const { workspace: _, ...missing } = good
  await writeFile(`${tasks}/task_aaaaaaaa_00000001.json`, JSON.stringify({ ...missing, id: "task_aaaaaaaa_00000001" }))
  await writeFile(`${tasks}/task_aaaaaaaa_00000002.json`, JSON.stringify(good))
  await writeFile(`${tasks}/task_aaaaaaaa_00000003.json`, "{ not json")

  const listed = structured(await call("task_list", {}))
  expect((listed.tasks as { task_id: string }[]).map((t) => t.task_id)).toContain(String(first.task_id))
  const corrupt = listed.corrupt_files as { path: string; moved_to: string; reason: string; fix: string }[]
  expect(corrupt.map((c) => c.path.split("/").at(-1)).sort()).toEqual([
    "task_aaaaaaaa_00000001.json",
    "task_aaaaaaaa_00000002.json",
    "task_aaaaaaaa_00000003.json",
  ])
  expect(corrupt.find((c) => c.path.endsWith("00000002.json"))?.reason).toContain(
    `is not its file name's task_aaaaaaaa_00000002`,
  )
  expect(corrupt.find((c) => c.path.endsWith("00000001.json"))?.reason).toContain("workspace")
  for (const file of corrupt) expect(existsSync(file.moved_to)).toBe(true)
  // Reported once.
  expect(structured(await call("task_list", {})).corrupt_files).toBeUndefined()
  // The other task's report is not served under the wrong id.
  expect(text(await call("task_result", { task_id: "task_aaaaaaaa_00000002" }))).toContain("No task")
  // A key lookup reads every record: it still works, and still attaches to its own task.
  const again = structured(
    await call("scout", { cwd: repo, task: "[script:quick] look", idempotency_key: "state-files-1" }),
  )
  expect(again.task_id).toBe(first.task_id)
})

test.each([
  ["garbage", "\u0000\u0001 not a lock"],
  ["an empty object", "{}"],
  [
    "a reused PID (init, alive, but not the owner)",
    JSON.stringify({ state: "active", taskID: "task_zzzzzzzz_00000009", ownerPid: 1, since: new Date().toISOString() }),
  ],
  [
    "a dead owner",
    JSON.stringify({
      state: "active",
      taskID: "task_zzzzzzzz_00000009",
      ownerPid: 2 ** 22 + 7,
      ownerStart: "x:1",
      since: new Date().toISOString(),
    }),
  ],
])("a lock file holding %s does not lock the workspace", async (_, content) => {
  const repo = await makeRepo(world)
  await mkdir(world.home.paths.locksDir, { recursive: true })
  const withWorkspace = content.startsWith('{"state"')
    ? JSON.stringify({ ...JSON.parse(content), workspace: repo })
    : content
  await writeFile(lockFile(repo), withWorkspace)
  const result = await call("worker", { cwd: repo, task: "[script:quick] edit" })
  expect(structured(result).status).toBe("succeeded")
  expect(existsSync(lockFile(repo))).toBe(false)
})

test("control: a lock held by a live owner (PID and start time) refuses a second writer", async () => {
  const repo = await makeRepo(world)
  await mkdir(world.home.paths.locksDir, { recursive: true })
  const lock = {
    workspace: repo,
    state: "active",
    taskID: "task_yyyyyyyy_00000001",
    ownerPid: process.pid,
    ownerStart: selfStart(),
    since: new Date().toISOString(),
  }
  await writeFile(lockFile(repo), JSON.stringify(lock))
  const result = await call("worker", { cwd: repo, task: "[script:quick] edit" })
  expect(text(result)).toContain("is held by task task_yyyyyyyy_00000001")
  expect((await readdir(world.home.paths.locksDir)).some((name) => name.includes(".corrupt"))).toBe(true)
})

test("config.json that is a directory, or routes a role to an unknown model, is an error before any session, with a fix that works", async () => {
  const repo = await makeRepo(world)
  const file = world.home.paths.configFile
  const saved = await Bun.file(file).text()
  const requests = world.model.stepRequests().length
  try {
    await Bun.write(file, JSON.stringify({ version: 1, models: { scout: "scripted/no-such-model" } }))
    const unknown = await call("scout", { cwd: repo, task: "[script:quick] look" })
    expect(text(unknown)).toContain(
      'config.json routes scout to "scripted/no-such-model", which OpenCode does not list',
    )
    expect(text(unknown)).toContain("next: Set models.scout in")
    const { rm } = await import("node:fs/promises")
    await rm(file)
    await mkdir(file)
    const directory = await call("scout", { cwd: repo, task: "[script:quick] look" })
    expect(text(directory)).toContain(`${file} is not a regular file`)
    expect(text(directory)).toContain("Remove it (it is a directory)")
    expect(world.model.stepRequests().length).toBe(requests)
    await rm(file, { recursive: true })
  } finally {
    await Bun.write(file, saved)
  }
  // Control: the restored config delegates.
  expect(structured(await call("scout", { cwd: repo, task: "[script:quick] look" })).status).toBe("succeeded")
})
