// Retention on a schedule in a process that never restarts, on the real OpenCode, the scripted model
// and real isolated workers: passes keep coming at retentionIntervalSeconds, each removes what is past
// its keep time (records, parked sessions, an applied patch, groups, tombstones) and nothing else; a
// waiting patch, however old, is never removed; a background task's result nobody has read stays past
// the keep time, and goes once task_result handed it over and it aged again.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { utimes } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { Delegations } from "../../src/engine/lifecycle"
import { Runtime } from "../../src/engine/capacity/runtime"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { TaskStore } from "../../src/engine/store/task-store"
import {
  discardedFile,
  patchFile,
  patchRecordFile,
  readPatchRecord,
  savePatchRecord,
} from "../../src/workspace/patches/patches"
import { connect, startWorld, stopWorld, structured, type Connected, type World } from "../mcp/_setup"
import { commitRepo } from "../helpers/git"
import { scratch } from "../helpers/world"
import { taskRecord } from "../helpers/records"
import { slowTurn } from "../helpers/slow-turn"

const DAY = 24 * 3600_000
let world: World
let producer: Connected

beforeAll(async () => {
  const add = {
    turns: [
      { steps: [{ tool: "write", args: { filePath: "added.txt", content: "from the worker\n" } }, { text: "Added." }] },
    ],
  }
  world = await startWorld({ add, background: slowTurn("Looked.", 1500) }, { retentionIntervalSeconds: 1 })
  producer = await connect(world)
})

afterAll(async () => {
  await producer?.close()
  await stopWorld(world)
})

async function repo(): Promise<string> {
  return commitRepo(await scratch(world, "oc-orch-sched-"), { "README.md": "# demo\n" })
}

async function isolated(cwd: string): Promise<{ patch_id: string; digest: string }> {
  const out = structured(
    await producer.client.callTool({
      name: "worker",
      arguments: { cwd, task: "Add a file. [script:add]", isolation: "worktree" },
    }),
  )
  expect(out.status).toBe("succeeded")
  return out.patch as { patch_id: string; digest: string }
}

/** A finished record whose result the parent was handed as it finished. */
function finished(daysAgo: number, fields: Partial<TaskRecord> = {}): TaskRecord {
  const at = new Date(Date.now() - daysAgo * DAY).toISOString()
  return taskRecord({ createdAt: at, updatedAt: at, finishedAt: at, resultReadAt: at, ...fields })
}

/** The stored record as if it finished `days` ago, its file too (what a week of waiting would leave). */
async function age(store: TaskStore, id: string, days: number) {
  const record = (await store.read(id))!
  const at = new Date(Date.now() - days * DAY)
  await saveFinished(store, { ...record, finishedAt: at.toISOString() })
}

/** Saved, then its file dated when it says it finished: retention ages a record by this machine's file times. */
async function saveFinished(store: TaskStore, record: TaskRecord) {
  await store.save(record)
  const at = new Date(record.finishedAt ?? Date.now())
  await utimes(store.file(record.id), at, at)
}

const group = (daysAgo: number) => ({
  version: 1,
  id: `group_${Math.random().toString(36).slice(2, 8)}_ab12`,
  createdAt: new Date(Date.now() - daysAgo * DAY).toISOString(),
  tasks: [],
})
const tombstone = (id: string, daysAgo: number) => ({
  version: 1,
  id,
  discardedAt: new Date(Date.now() - daysAgo * DAY).toISOString(),
  workspace: "/tmp",
})

async function passes(delegations: Delegations, count: number) {
  const deadline = Date.now() + 60_000
  while ((delegations.retention?.finished ?? 0) < count && Date.now() < deadline) await Bun.sleep(100)
  expect(delegations.retention?.finished ?? 0).toBeGreaterThanOrEqual(count)
}

test("a process that never restarts prunes on schedule; an applied patch past retention goes, a waiting one never does", async () => {
  const { paths } = world.home
  const cwd = await repo()
  const waiting = await isolated(cwd)
  const applied = await isolated(cwd)
  const wrote = await producer.client.callTool({
    name: "patch_apply",
    arguments: { patch_id: applied.patch_id, digest: applied.digest },
  })
  expect(structured(wrote).state).toBe("applied")
  // Both patches look old: the applied one was applied 8 days ago, the waiting one was collected 30 days ago.
  const appliedRecord = (await readPatchRecord(paths.patchesDir, applied.patch_id))!
  await savePatchRecord(paths.patchesDir, { ...appliedRecord, appliedAt: new Date(Date.now() - 8 * DAY).toISOString() })
  const waitingRecord = (await readPatchRecord(paths.patchesDir, waiting.patch_id))!
  const month = new Date(Date.now() - 30 * DAY).toISOString()
  await savePatchRecord(paths.patchesDir, { ...waitingRecord, createdAt: month, collectedAt: month })

  const store = new TaskStore(paths.tasksDir)
  const weekOld = finished(8)
  const fresh = finished(0.01)
  for (const record of [weekOld, fresh]) await saveFinished(store, record)
  const [oldGroup, newGroup] = [group(8), group(0.01)]
  for (const g of [oldGroup, newGroup]) await Bun.write(`${paths.groupsDir}/${g.id}.json`, JSON.stringify(g))
  const [oldStone, newStone] = ["patch_aaaa_0001", "patch_aaaa_0002"]
  await Bun.write(discardedFile(paths.patchesDir, oldStone), JSON.stringify(tombstone(oldStone, 8)))
  await Bun.write(discardedFile(paths.patchesDir, newStone), JSON.stringify(tombstone(newStone, 0.01)))

  // A second process on the same state, its schedule at retentionIntervalSeconds 1 (the world's config).
  const runtime = new Runtime(readFlags(world.home.env))
  const delegations = new Delegations(runtime, { retention: true })
  try {
    const { client } = await runtime.opencode()
    await passes(delegations, 1)
    expect(await store.read(weekOld.id)).toBeUndefined()
    expect(existsSync(`${paths.groupsDir}/${oldGroup.id}.json`)).toBe(false)
    expect(existsSync(discardedFile(paths.patchesDir, oldStone))).toBe(false)
    expect(existsSync(patchRecordFile(paths.patchesDir, applied.patch_id))).toBe(false)
    expect(existsSync(discardedFile(paths.patchesDir, applied.patch_id))).toBe(true)
    // Controls: what is within its keep time, and the waiting patch, stay.
    expect((await store.read(fresh.id))?.id).toBe(fresh.id)
    expect(existsSync(`${paths.groupsDir}/${newGroup.id}.json`)).toBe(true)
    expect(existsSync(discardedFile(paths.patchesDir, newStone))).toBe(true)
    expect(existsSync(patchRecordFile(paths.patchesDir, waiting.patch_id))).toBe(true)
    expect(existsSync(patchFile(paths.patchesDir, waiting.patch_id))).toBe(true)
    expect(existsSync(waitingRecord.layout.tree)).toBe(true)

    // Later, in the same process: a record that aged meanwhile and a day-old parked session.
    const session = (await client.session.create({ directory: cwd, title: "parked" })).data!.id
    const later = finished(8)
    const parked = finished(1.5, { workspace: cwd, sessionID: session, sessions: [session] })
    for (const record of [later, parked]) await saveFinished(store, record)
    const seen = delegations.retention!.finished
    await passes(delegations, seen + 2)
    expect(await store.read(later.id)).toBeUndefined()
    expect((await store.read(parked.id))?.sessionID).toBeUndefined()
    expect((await client.session.get({ sessionID: session, directory: cwd })).response.status).toBe(404)
    expect((await store.read(fresh.id))?.id).toBe(fresh.id)
    expect(existsSync(patchRecordFile(paths.patchesDir, waiting.patch_id))).toBe(true)
    // The waiting patch is still the user's to apply.
    const show = await producer.client.callTool({ name: "patch_show", arguments: { patch_id: waiting.patch_id } })
    expect(show.isError).toBeFalsy()
  } finally {
    delegations.retention?.stop()
    runtime.close()
  }
})

test("a background result nobody read outlives the keep time; once task_result handed it over and it aged, it goes", async () => {
  const { paths } = world.home
  const cwd = await repo()
  const reader = await connect(world, { syncBudgetMs: 200 })
  const runtime = new Runtime(readFlags(world.home.env))
  const delegations = new Delegations(runtime, { retention: true })
  try {
    await runtime.opencode()
    const started = structured(
      await reader.client.callTool({ name: "scout", arguments: { cwd, task: "Look. [script:background]" } }),
    )
    expect(started.status).toBe("running")
    const id = String(started.task_id)
    // Followed to its end by task_status, which hands over no result.
    let status = started
    while (status.status === "running")
      status = structured(
        await reader.client.callTool({ name: "task_status", arguments: { task_id: id, wait_seconds: 10 } }),
      )
    expect(status.status).toBe("succeeded")
    const store = new TaskStore(paths.tasksDir)
    expect((await store.read(id))?.resultReadAt).toBeUndefined()
    await age(store, id, 8)
    const seen = delegations.retention!.finished
    await passes(delegations, seen + 2)
    const result = structured(await reader.client.callTool({ name: "task_result", arguments: { task_id: id } }))
    expect(result.report).toBe("Looked.")
    // Control: handed over now, then a week older: the next passes remove it.
    expect((await store.read(id))?.resultReadAt).toBeDefined()
    await age(store, id, 8)
    await passes(delegations, delegations.retention!.finished + 2)
    expect(await store.read(id)).toBeUndefined()
  } finally {
    delegations.retention?.stop()
    runtime.close()
    await reader.close()
  }
})
