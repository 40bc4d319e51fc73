import { expect, test } from "bun:test"
import { lockedError, orphaned, WriterLocks } from "../../src/engine/capacity/locks"
import { newTaskId, noteProgress } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { TaskStore } from "../../src/engine/store/task-store"
import { readJson, writeJson } from "../../src/util/fs"
import { tempDir } from "../helpers/temp"

test("two lock tables on one directory (two MCP processes) admit one writer per workspace", async () => {
  await using dir = await tempDir("oc-orch-locks-")
  const a = new WriterLocks(`${dir.path}/locks`)
  const b = new WriterLocks(`${dir.path}/locks`)
  const results = await Promise.all([
    a.tryAcquire("/repo", "task_a_1"),
    b.tryAcquire("/repo", "task_b_2"),
    b.tryAcquire("/other", "task_c_3"),
  ])
  expect(results.filter((r) => r.acquired).length).toBe(2)
  const refused = results.find((r) => !r.acquired)
  if (refused?.acquired !== false) throw new Error("expected a refusal")
  expect(["task_a_1", "task_b_2"]).toContain(refused.holder.taskID)
  const error = lockedError(refused.holder)
  expect(error.kind).toBe("Locked")
  expect(error.message).toContain(refused.holder.taskID)
  expect(error.hint).toContain("task_cancel")
})

test("writer states conflict along the path: an ancestor, a descendant, never a sibling with a shared prefix", async () => {
  await using dir = await tempDir("oc-orch-locks-")
  const locks = new WriterLocks(`${dir.path}/locks`)
  expect((await locks.tryAcquire("/repo/sub", "task_in_1")).acquired).toBe(true)
  for (const [workspace, id] of [
    ["/repo", "patch_x_1"],
    ["/repo/sub/deep", "task_d_2"],
    ["/repo/sub", "task_s_3"],
  ] as const) {
    const refused = await locks.tryAcquire(workspace, id)
    if (refused.acquired) throw new Error(`${workspace} was admitted beside /repo/sub`)
    expect(refused.holder.taskID).toBe("task_in_1")
    expect(lockedError(refused.holder, workspace).message).toContain(
      workspace === "/repo/sub"
        ? "The workspace /repo/sub is held by task task_in_1"
        : `${workspace} overlaps /repo/sub`,
    )
  }
  // The refused acquirers left no state behind: once the holder clears, the ancestor is free.
  expect((await locks.list()).map((lock) => lock.workspace)).toEqual(["/repo/sub"])
  // Control: a sibling whose name starts the same is another directory.
  expect((await locks.tryAcquire("/repo/subway", "task_w_4")).acquired).toBe(true)
  await locks.clear("/repo/sub", "task_in_1")
  expect((await locks.tryAcquire("/repo/other", "task_o_5")).acquired).toBe(true)
  expect((await locks.tryAcquire("/repo", "patch_y_2")).acquired).toBe(false)
  // Racing acquirers on nested paths: never both.
  for (let round = 0; round < 20; round++) {
    const table = new WriterLocks(`${dir.path}/race-${round}`)
    const both = await Promise.all([
      table.tryAcquire("/r", `task_a_${round}`),
      new WriterLocks(`${dir.path}/race-${round}`).tryAcquire("/r/s", `task_b_${round}`),
    ])
    expect(both.filter((r) => r.acquired).length).toBeLessThanOrEqual(1)
  }
})

test("states move only for the holder; clear only by the holder; a dead owner's state is orphaned", async () => {
  await using dir = await tempDir("oc-orch-locks-")
  const locks = new WriterLocks(`${dir.path}/states`)
  await locks.tryAcquire("/repo", "task_x_1")
  await locks.set("/repo", "task_other_2", "quarantined")
  expect((await locks.read("/repo"))?.state).toBe("active")
  await locks.set("/repo", "task_x_1", "quarantined", { reason: "removal not confirmed", sessionID: "ses_1" })
  const lock = (await locks.read("/repo"))!
  expect(lockedError(lock).hint).toContain("restart the MCP server")
  await locks.clear("/repo", "task_other_2")
  expect(await locks.read("/repo")).toBeDefined()
  expect(orphaned(lock)).toBe(false)
  expect(orphaned({ ...lock, ownerPid: 2 ** 22 + 1 })).toBe(true)
  await locks.clear("/repo", "task_x_1")
  expect(await locks.read("/repo")).toBeUndefined()
})

test("the task store writes in order, keeps the newest progress, lists newest first and finds by key", async () => {
  await using dir = await tempDir("oc-orch-locks-")
  const store = new TaskStore(`${dir.path}/tasks`)
  const now = new Date().toISOString()
  const base = (id: string, createdAt: string): TaskRecord => ({
    version: 1,
    id,
    role: "worker",
    agent: "a",
    workspace: "/repo",
    title: "t",
    writable: true,
    status: "running",
    sessions: [],
    ownerPid: process.pid,
    createdAt,
    updatedAt: now,
    deadline: 0,
    operationMs: 1000,
    turns: 1,
    revision: 0,
    progress: [],
  })
  const old = base(newTaskId(), "2020-01-01T00:00:00.000Z")
  const record = { ...base(newTaskId(), now), idempotencyKey: "k" }
  await store.save(old)
  for (let i = 0; i < 100; i++) {
    void store.update(record, (r) => noteProgress(r, `line ${i}`))
  }
  await store.save(record)
  const read = (await store.read(record.id))!
  expect(read.revision).toBe(100)
  expect(read.progress.at(-1)).toBe("line 99")
  expect(read.progress.length).toBe(40)
  expect((await store.list()).map((r) => r.id)).toEqual([record.id, old.id])
  expect((await store.findByKey("k"))?.id).toBe(record.id)
  expect(() => store.file("../../etc/passwd")).toThrow("not a task id")
  await writeJson(`${dir.path}/tasks/task_zz_00000000.json`, { version: 2 })
  expect((await store.list()).length).toBe(2)
  expect(await readJson(`${dir.path}/tasks/missing.json`)).toBeUndefined()
})
