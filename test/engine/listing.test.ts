// The task listing as an engine use case, called directly: which tasks a query selects (status, the
// workspace and what lies inside it, an isolated task under the workspace it was asked for), the one
// bound on its limit, and the records set aside while listing, reported once by the value it returns
// (no process-wide list to drain). The MCP tool and the `tasks` command read this same selection.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdir, writeFile } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { AppError } from "../../src/errors"
import { Delegations } from "../../src/engine/lifecycle"
import { checkLimit, indexQuery, storedTasks, within } from "../../src/engine/listing"
import { LIST_LIMIT } from "../../src/engine/terms"
import { Runtime } from "../../src/engine/capacity/runtime"
import { newTaskId } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { TaskStore } from "../../src/engine/store/task-store"
import { taskRecord } from "../helpers/records"
import { tempDir } from "../helpers/temp"

let clock = Date.parse("2026-12-01T12:00:00Z")

function record(fields: Partial<TaskRecord> = {}): TaskRecord {
  // Each record is newer than the one before: the listing is newest first.
  clock += 1000
  const at = new Date(clock).toISOString()
  return taskRecord({ workspace: "/w/repo", createdAt: at, updatedAt: at, ...fields })
}

const newestFirst = (records: TaskRecord[]) => [...records].sort((a, b) => b.createdAt.localeCompare(a.createdAt))

describe("the selection, through the store's index", () => {
  const running = record({ status: "running" })
  const failed = record({ status: "failed", workspace: "/w/repo/sub" })
  const sibling = record({ workspace: "/w/repo2" })
  const isolated = record({
    role: "worker",
    workspace: "/cache/worktrees/lane-1/tree",
    isolation: { mode: "worktree", source: "/w/repo", patchId: "patch_x" },
  })
  const all = newestFirst([running, failed, sibling, isolated])
  const ids = (records: TaskRecord[]) => records.map((r) => r.id)
  let dir: Awaited<ReturnType<typeof tempDir>>
  beforeAll(async () => {
    dir = await tempDir("oc-orch-listing-select-")
    const store = new TaskStore(dir.path)
    for (const r of all) await store.save(r)
  })
  afterAll(() => dir[Symbol.asyncDispose]())

  test.each([
    ["no filter: every task, newest first", {}, [isolated, sibling, failed, running]],
    ["a status", { status: "running" as const }, [running]],
    [
      "a workspace: itself and inside it, an isolated task by its source",
      { cwd: "/w/repo" },
      [isolated, failed, running],
    ],
    ["a workspace with a trailing slash means the same", { cwd: "/w/repo/" }, [isolated, failed, running]],
    ["a sibling whose name starts the same is not inside", { cwd: "/w/repo2" }, [sibling]],
    ["status and workspace together", { cwd: "/w/repo", status: "failed" as const }, [failed]],
    ["a worktree path is not where an isolated task is listed", { cwd: "/cache/worktrees" }, []],
  ])("%s", async (_, query, expected) => {
    const selected = await storedTasks(dir.path, query)
    expect(ids(selected.tasks)).toEqual(ids(expected))
    expect(selected.total).toBe(expected.length)
  })

  test("the limit cuts the list, the total counts every match", async () => {
    const selected = await storedTasks(dir.path, { limit: 2 })
    expect(ids(selected.tasks)).toEqual(ids([isolated, sibling]))
    expect(selected.total).toBe(4)
  })

  test.each([[-5], [0], [1.5], [Number.NaN], [LIST_LIMIT.max + 1]])(
    "limit %p is refused, naming the bounds",
    (limit) => {
      let thrown: unknown
      try {
        indexQuery({ limit })
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(AppError)
      expect((thrown as AppError).kind).toBe("Usage")
      expect((thrown as AppError).message).toContain(`from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}`)
      expect((thrown as AppError).hint).toContain("Pass a limit")
    },
  )

  test("control: the bounds themselves pass, and no limit is the default", () => {
    expect([checkLimit(LIST_LIMIT.min), checkLimit(LIST_LIMIT.max), checkLimit(undefined)]).toEqual([
      LIST_LIMIT.min,
      LIST_LIMIT.max,
      LIST_LIMIT.fallback,
    ])
  })

  test("within: the workspace, its inside, nothing beside it", () => {
    expect(["/w/repo", "/w/repo/a", "/w/repo2", "/w"].filter(within("/w/repo"))).toEqual(["/w/repo", "/w/repo/a"])
    expect(["/a", "/b"].filter(within(undefined))).toEqual(["/a", "/b"])
  })
})

describe("the stored listing", () => {
  test("a garbage record is set aside and returned by this listing, once; the good records are listed", async () => {
    await using dir = await tempDir("oc-orch-listing-")
    const store = new TaskStore(dir.path)
    const good = [record(), record({ status: "running" })]
    for (const entry of good) await store.save(entry)
    const bad = newTaskId()
    await writeFile(`${dir.path}/${bad}.json`, "{ not json")
    const first = await storedTasks(dir.path, { limit: 5 })
    expect(first.tasks.map((r) => r.id).sort()).toEqual(good.map((r) => r.id).sort())
    expect(first.setAside.map((entry) => entry.path)).toEqual([`${dir.path}/${bad}.json`])
    // Reported by the listing that found it: a second listing (another store) has nothing to report.
    const second = await storedTasks(dir.path, { limit: 5 })
    expect(second.setAside).toEqual([])
    expect(second.tasks).toHaveLength(2)
  })

  test("a bad limit is refused before anything is read: no record is set aside by it", async () => {
    await using dir = await tempDir("oc-orch-listing-")
    const bad = newTaskId()
    await writeFile(`${dir.path}/${bad}.json`, "{ not json")
    await expect(storedTasks(dir.path, { limit: -5 })).rejects.toThrow("from 1 to 200")
    expect(await Bun.file(`${dir.path}/${bad}.json`).exists()).toBe(true)
  })
})

describe("Delegations.listTasks", () => {
  test("filters by status and reports what this process set aside once, with the lanes", async () => {
    await using home = await tempDir("oc-orch-listing-home-")
    const runtime = new Runtime(readFlags({ HOME: home.path, PATH: "/usr/bin:/bin" }))
    try {
      const delegations = new Delegations(runtime)
      const store = new TaskStore(runtime.paths.tasksDir)
      await mkdir(runtime.paths.tasksDir, { recursive: true })
      const [done, running] = [record(), record({ status: "running" })]
      for (const entry of [done, running]) await store.save(entry)
      const bad = newTaskId()
      await writeFile(`${runtime.paths.tasksDir}/${bad}.json`, JSON.stringify({ version: 1, id: bad }))
      const listed = await delegations.listTasks({ status: "running" })
      expect(listed.tasks.map((r) => r.id)).toEqual([running.id])
      expect(listed.total).toBe(1)
      expect(listed.patches).toEqual([])
      expect(listed.lanes).toMatchObject({ claimed: 0, max: expect.any(Number) })
      expect(listed.setAside.map((entry) => entry.path)).toEqual([`${runtime.paths.tasksDir}/${bad}.json`])
      const again = await delegations.listTasks({})
      expect(again.tasks.map((r) => r.id)).toEqual([running.id, done.id])
      expect(again.setAside).toEqual([])
      await expect(delegations.listTasks({ limit: 0 })).rejects.toThrow("limit 0 is invalid")
    } finally {
      runtime.close()
    }
  })
})
