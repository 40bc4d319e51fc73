// install and uninstall retire a shared OpenCode server that would keep the old agents and plugin,
// but never one that still runs a delegation.
import { expect, test } from "bun:test"
import { newTaskId } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { TaskStore } from "../../src/engine/store/task-store"
import { retireSharedServer } from "../../src/install/server"
import { ensureServer, readServerRecord, stopServer } from "../../src/opencode/server"
import { alive } from "../../src/util/process"
import { machine } from "./helpers"

test("a shared server is stopped when idle, kept while a delegation runs on it", async () => {
  using m = machine()
  try {
    expect(await retireSharedServer(m.paths)).toBe("none")
    const server = await ensureServer({ paths: m.paths, binary: m.opencode, env: m.env })

    const store = new TaskStore(m.paths.tasksDir)
    const now = new Date().toISOString()
    const running: TaskRecord = {
      version: 1,
      id: newTaskId(),
      role: "worker",
      agent: "opencode-orchestrator-worker",
      workspace: m.dir,
      title: "t",
      writable: true,
      status: "running",
      sessions: [],
      ownerPid: process.pid,
      createdAt: now,
      updatedAt: now,
      deadline: Date.now() + 60_000,
      operationMs: 60_000,
      turns: 1,
      revision: 0,
      progress: [],
    }
    await store.save(running)
    expect(await retireSharedServer(m.paths)).toBe("busy")
    expect(alive(server.pid)).toBe(true)

    await store.save({ ...running, status: "succeeded", finishedAt: new Date().toISOString() })
    expect(await retireSharedServer(m.paths)).toBe("stopped")
    expect(alive(server.pid)).toBe(false)
    expect(await readServerRecord(m.paths)).toBeUndefined()
  } finally {
    await stopServer(m.paths)
  }
}, 120_000)
