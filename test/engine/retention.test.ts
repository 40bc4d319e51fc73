// Retention of finished tasks: the parked session goes after a day, the record after a week (or past
// the newest 200), and a record keeps naming its session until OpenCode confirms it is gone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdtemp, rm, utimes } from "node:fs/promises"
import { tmpdir } from "node:os"
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { connect } from "../../src/opencode/client"
import { ensureServer, stopServer } from "../../src/opencode/server"
import { boundedPlan, prune, RECORD_MAX, retentionPlan as planWith } from "../../src/engine/retention/retention"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { TaskStore } from "../../src/engine/store/task-store"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { TEST_PATH } from "../helpers/mcp"
import { taskRecord } from "../helpers/records"

const HOUR = 3600_000
const NOW = Date.parse("2026-11-30T12:00:00Z")

function record(hoursAgo: number | undefined, fields: Partial<TaskRecord> = {}): TaskRecord {
  const at = hoursAgo === undefined ? undefined : new Date(NOW - hoursAgo * HOUR).toISOString()
  const status = hoursAgo === undefined ? "running" : "succeeded"
  return taskRecord({
    status,
    createdAt: at ?? new Date(NOW).toISOString(),
    updatedAt: at ?? "",
    finishedAt: at,
    // Handed to the parent as it finished: the unread case is in retention-facts.test.ts.
    resultReadAt: at,
    ...fields,
  })
}

/** When each record's file was written on this machine: here, when it says it finished. */
const writtenWhenFinished = (records: TaskRecord[]) =>
  new Map(records.map((r) => [r.id, Date.parse(r.finishedAt ?? "")] as [string, number]))
const retentionPlan = (records: TaskRecord[], now: number) => planWith(records, now, writtenWhenFinished(records))

/** Saved, then its file dated when the record says it finished (the machine's clock of a test's NOW). */
async function saveFinished(store: TaskStore, r: TaskRecord) {
  await store.save(r)
  const at = new Date(r.finishedAt ?? NOW)
  await utimes(store.file(r.id), at, at)
}

describe("retentionPlan", () => {
  test.each([
    ["a fresh task keeps both", 1, "ses_a", { dropSession: false, dropRecord: false }],
    ["after a day the parked session goes", 25, "ses_a", { dropSession: true, dropRecord: false }],
    ["after a week the record goes too", 24 * 8, "ses_a", { dropSession: true, dropRecord: true }],
    ["an old record without a session goes alone", 24 * 8, undefined, { dropSession: false, dropRecord: true }],
  ] as const)("%s", (_, hoursAgo, sessionID, expected) => {
    const [plan] = retentionPlan([record(hoursAgo, { sessionID })], NOW)
    expect(plan).toMatchObject(expected)
  })

  test("running tasks are never touched", () => {
    expect(retentionPlan([record(undefined, { sessionID: "ses_r" })], NOW)).toEqual([])
  })

  test("a pass is cut to perPass removals, oldest first; without a connection sessions wait", () => {
    const records = Array.from({ length: 10 }, (_, i) => record(25 + i, { sessionID: `ses_${i}` }))
    const bounded = boundedPlan(retentionPlan(records, NOW), 4, true)
    expect(bounded.map((step) => step.record.id)).toEqual(
      records
        .slice(6)
        .reverse()
        .map((r) => r.id),
    )
    // Control: an unbounded pass takes every one.
    expect(boundedPlan(retentionPlan(records, NOW), 1000, true)).toHaveLength(10)
    expect(boundedPlan(retentionPlan(records, NOW), 1000, false)).toEqual([])
  })

  test(`only the newest ${RECORD_MAX} finished records are kept`, () => {
    const records = Array.from({ length: RECORD_MAX + 3 }, (_, i) => record(2 + i * 0.001))
    const dropped = retentionPlan(records, NOW).filter((p) => p.dropRecord)
    expect(dropped.map((p) => p.record.id)).toEqual(records.slice(RECORD_MAX).map((r) => r.id))
  })
})

describe("prune on the real OpenCode", () => {
  let model: ScriptedModel
  let home: IsolatedHome
  let workspace: string

  beforeAll(async () => {
    model = await startScriptedModel()
    home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
    workspace = await mkdtemp(`${tmpdir()}/oc-orch-retention-`)
  })

  afterAll(async () => {
    await stopServer(home.paths)
    await model.stop()
    await home.dispose()
    await rm(workspace, { recursive: true, force: true })
  })

  test("removes a day-old parked session and keeps its record; removes a week-old record", async () => {
    const server = await ensureServer({ paths: home.paths, binary: "opencode", env: home.env })
    const client = connect(server, { standIns: home.paths.opencodeDirsDir })
    const parked = (await client.session.create({ directory: workspace, title: "parked" })).data!.id
    const fresh = (await client.session.create({ directory: workspace, title: "fresh" })).data!.id
    const store = new TaskStore(home.paths.tasksDir)
    const dayOld = record(25, { workspace, sessionID: parked, sessions: [parked] })
    const recent = record(1, { workspace, sessionID: fresh, sessions: [fresh] })
    const weekOld = record(24 * 8, { workspace })
    for (const r of [dayOld, recent, weekOld]) await saveFinished(store, r)

    expect(await prune(store, client, { now: NOW })).toEqual({ sessionsRemoved: 1, recordsRemoved: 1 })
    const ids = ((await client.session.list({ directory: workspace })).data ?? []).map((s) => s.id)
    expect(ids).toEqual([fresh])
    expect((await store.read(dayOld.id))?.sessionID).toBeUndefined()
    expect((await store.read(dayOld.id))?.note).toContain("task_continue is no longer possible")
    expect((await store.read(recent.id))?.sessionID).toBe(fresh)
    expect(await store.read(weekOld.id)).toBeUndefined()
  })

  async function parked(client: OpencodeClient, count: number, hoursAgo: number, store: TaskStore) {
    const made: TaskRecord[] = []
    for (let i = 0; i < count; i++) {
      const id = (await client.session.create({ directory: workspace, title: `parked ${i}` })).data!.id
      const r = record(hoursAgo + i * 0.01, { workspace, sessionID: id, sessions: [id] })
      await saveFinished(store, r)
      made.push(r)
    }
    return made
  }

  const listed = async (client: OpencodeClient) =>
    new Set(((await client.session.list({ directory: workspace })).data ?? []).map((s) => s.id))

  test("a pass removes at most perPass sessions; the next passes finish the rest", async () => {
    const client = connect(await ensureServer({ paths: home.paths, binary: "opencode", env: home.env }), {
      standIns: home.paths.opencodeDirsDir,
    })
    const store = new TaskStore(await mkdtemp(`${tmpdir()}/oc-orch-bounded-`))
    const records = await parked(client, 12, 30, store)
    expect(await prune(store, client, { now: NOW, perPass: 5 })).toEqual({ sessionsRemoved: 5, recordsRemoved: 0 })
    const left = await listed(client)
    expect(records.filter((r) => left.has(r.sessionID!))).toHaveLength(7)
    expect(await prune(store, client, { now: NOW, perPass: 5 })).toEqual({ sessionsRemoved: 5, recordsRemoved: 0 })
    expect(await prune(store, client, { now: NOW, perPass: 5 })).toEqual({ sessionsRemoved: 2, recordsRemoved: 0 })
    const gone = await listed(client)
    expect(records.filter((r) => gone.has(r.sessionID!))).toEqual([])
    for (const r of records) expect((await store.read(r.id))?.sessionID).toBeUndefined()
  })

  test("two processes pruning at once lose nothing they should keep", async () => {
    const server = await ensureServer({ paths: home.paths, binary: "opencode", env: home.env })
    const [a, b] = [
      connect(server, { standIns: home.paths.opencodeDirsDir }),
      connect(server, { standIns: home.paths.opencodeDirsDir }),
    ]
    const dir = await mkdtemp(`${tmpdir()}/oc-orch-two-`)
    const [storeA, storeB] = [new TaskStore(dir), new TaskStore(dir)]
    const dayOld = await parked(a, 6, 30, storeA)
    const fresh = await parked(a, 4, 1, storeA)
    const weekOld = Array.from({ length: 5 }, () => record(24 * 9))
    for (const r of weekOld) await saveFinished(storeA, r)
    const [one, two] = await Promise.all([prune(storeA, a, { now: NOW }), prune(storeB, b, { now: NOW })])
    // Each removal happened, whichever process made it; a session both tried counts for both.
    expect(one.sessionsRemoved + two.sessionsRemoved).toBeGreaterThanOrEqual(6)
    expect(one.recordsRemoved + two.recordsRemoved).toBeGreaterThanOrEqual(5)
    const live = await listed(a)
    for (const r of fresh)
      expect([live.has(r.sessionID!), (await storeB.read(r.id))?.sessionID]).toEqual([true, r.sessionID])
    for (const r of dayOld)
      expect([live.has(r.sessionID!), (await storeB.read(r.id))?.status]).toEqual([false, "succeeded"])
    for (const r of weekOld) expect(await storeB.read(r.id)).toBeUndefined()
  })

  test("a record continued by another process mid-pass keeps its new turn and session", async () => {
    const real = connect(await ensureServer({ paths: home.paths, binary: "opencode", env: home.env }), {
      standIns: home.paths.opencodeDirsDir,
    })
    const store = new TaskStore(await mkdtemp(`${tmpdir()}/oc-orch-race-`))
    const [raced, quiet] = await parked(real, 2, 30, store)
    const next = (await real.session.create({ directory: workspace, title: "continued" })).data!.id
    // The racing process: a task_continue of `raced` lands just as the pass deletes its old session.
    const racing = new TaskStore(store.dir)
    const client = new Proxy(real, {
      get: (target, key) =>
        key !== "session"
          ? Reflect.get(target, key)
          : new Proxy(target.session, {
              get: (session, name) => {
                if (name !== "delete") return Reflect.get(session, name).bind(session)
                return async (args: { sessionID: string; directory: string }) => {
                  if (args.sessionID === raced!.sessionID) {
                    const current = (await racing.read(raced!.id))!
                    await racing.save({
                      ...current,
                      status: "running",
                      sessionID: next,
                      sessions: [...current.sessions, next],
                      revision: current.revision + 1,
                    })
                  }
                  return session.delete(args)
                }
              },
            }),
    }) as OpencodeClient
    await prune(store, client, { now: NOW })
    const after = (await store.read(raced!.id))!
    expect([after.status, after.sessionID]).toEqual(["running", next])
    // Control: the record nobody touched had its parked session dropped and said so.
    expect((await store.read(quiet!.id))?.sessionID).toBeUndefined()
    expect((await store.read(quiet!.id))?.note).toContain("task_continue is no longer possible")
  })
})
