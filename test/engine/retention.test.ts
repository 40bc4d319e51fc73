// Retention of finished tasks: the parked session goes after a day, the record after a week (or past
// the newest 200), and a record keeps naming its session until OpenCode confirms it is gone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { connect } from "../../src/opencode/client"
import { ensureServer, stopServer } from "../../src/opencode/server"
import { prune, retentionPlan, RECORD_MAX } from "../../src/engine/retention"
import { newTaskId, TaskStore, type TaskRecord } from "../../src/engine/tasks"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { TEST_PATH } from "../helpers/mcp"

const HOUR = 3600_000
const NOW = Date.parse("2026-11-30T12:00:00Z")

function record(hoursAgo: number | undefined, fields: Partial<TaskRecord> = {}): TaskRecord {
  const at = hoursAgo === undefined ? undefined : new Date(NOW - hoursAgo * HOUR).toISOString()
  return {
    version: 1,
    id: newTaskId(),
    role: "scout",
    agent: "opencode-orchestrator-scout",
    workspace: "/tmp",
    title: "t",
    writable: false,
    status: hoursAgo === undefined ? "running" : "succeeded",
    sessions: [],
    ownerPid: 1,
    createdAt: at ?? new Date(NOW).toISOString(),
    updatedAt: at ?? "",
    finishedAt: at,
    deadline: 0,
    operationMs: 0,
    turns: 1,
    revision: 1,
    progress: [],
    ...fields,
  }
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

  test(`only the newest ${RECORD_MAX} finished records are kept`, () => {
    const records = Array.from({ length: RECORD_MAX + 3 }, (_, i) => record(i * 0.001))
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
    const client = connect(server)
    const parked = (await client.session.create({ directory: workspace, title: "parked" })).data!.id
    const fresh = (await client.session.create({ directory: workspace, title: "fresh" })).data!.id
    const store = new TaskStore(home.paths.tasksDir)
    const dayOld = record(25, { workspace, sessionID: parked, sessions: [parked] })
    const recent = record(1, { workspace, sessionID: fresh, sessions: [fresh] })
    const weekOld = record(24 * 8, { workspace })
    for (const r of [dayOld, recent, weekOld]) await store.save(r)

    expect(await prune(store, client, { now: NOW })).toEqual({ sessionsRemoved: 1, recordsRemoved: 1 })
    const ids = ((await client.session.list({ directory: workspace })).data ?? []).map((s) => s.id)
    expect(ids).toEqual([fresh])
    expect((await store.read(dayOld.id))?.sessionID).toBeUndefined()
    expect((await store.read(dayOld.id))?.note).toContain("task_continue is no longer possible")
    expect((await store.read(recent.id))?.sessionID).toBe(fresh)
    expect(await store.read(weekOld.id)).toBeUndefined()
  })
})
