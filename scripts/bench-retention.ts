// f) A retention pass over N finished records, each with a day-old parked session on the real OpenCode:
//    the scheduled pass (engine/retention/retention.ts: session deletes 8 in flight, records rewritten) beside the
//    path before (one record after another: a delete, a check, a save), and one bounded pass of 500.
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { prune, retentionPlan } from "../src/engine/retention/retention"
import { newTaskId } from "../src/engine/records/tasks"
import type { TaskRecord } from "../src/engine/records/record-schema"
import { TaskStore } from "../src/engine/store/task-store"
import { createRepository } from "../src/model/demo"
import { createIsolatedHome } from "../src/model/home"
import { connect } from "../src/opencode/client"
import { ensureServer, stopServer } from "../src/opencode/server"
import { removeSession } from "../src/opencode/session"

type Client = ReturnType<typeof connect>

function finished(workspace: string, sessionID: string, at: string): TaskRecord {
  return {
    ...{
      version: 1,
      id: newTaskId(),
      role: "scout",
      agent: "opencode-orchestrator-scout",
      workspace,
      title: "bench",
      writable: false,
      status: "succeeded",
    },
    ...{
      sessionID,
      sessions: [sessionID],
      ownerPid: 1,
      createdAt: at,
      updatedAt: at,
      finishedAt: at,
      deadline: 0,
      operationMs: 0,
      turns: 1,
      revision: 1,
      progress: [],
    },
  }
}

async function seed(client: Client, dir: string, count: number): Promise<TaskStore> {
  const store = new TaskStore(await mkdtemp(`${tmpdir()}/oc-orch-bench-retention-`))
  const at = new Date(Date.now() - 30 * 3600_000).toISOString()
  for (let made = 0; made < count; made += 20) {
    const batch = Math.min(20, count - made)
    await Promise.all(
      Array.from({ length: batch }, async () => {
        const id = (await client.session.create({ directory: dir, title: "bench parked" })).data!.id
        await store.save(finished(dir, id, at))
      }),
    )
  }
  return store
}

/**
 * The path before, as it was: every step in turn, a delete (and a check) against the server, then a save or a removal.
 */
async function before(store: TaskStore, client: Client): Promise<number> {
  let removed = 0
  for (const { record, dropSession, dropRecord } of retentionPlan(await store.list(), Date.now())) {
    if (dropSession) {
      if (!(await removeSession(client, record.sessionID!, record.workspace))) continue
      removed++
      if (!dropRecord) await store.save({ ...record, sessionID: undefined })
    }
    if (dropRecord) await rm(store.file(record.id), { force: true })
  }
  return removed
}

const cpuSeconds = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(stat[11]) + Number(stat[12])) / 100
}

export async function benchRetention(count: number, path: string) {
  const home = await createIsolatedHome({ modelUrl: "http://127.0.0.1:9/v1", env: { PATH: path } })
  const dir = await createRepository("oc-orch-bench-retention-", { "README.md": "# retention\n" })
  try {
    const server = await ensureServer({ paths: home.paths, binary: "opencode", env: home.env })
    const client = connect(server, { standIns: home.paths.opencodeDirsDir })
    const stores: TaskStore[] = []
    const measure = async (label: string, body: (store: TaskStore) => Promise<number>) => {
      const store = await seed(client, dir, count)
      stores.push(store)
      const cpu = cpuSeconds(server.pid)
      const started = performance.now()
      const removed = await body(store)
      const ms = performance.now() - started
      console.log(
        `${label.padEnd(44)} ${ms.toFixed(0).padStart(7)} ms  ${removed} sessions removed, server ` +
          `${(cpuSeconds(server.pid) - cpu).toFixed(1)} CPU-s`,
      )
      return ms
    }
    try {
      const old = await measure(`f1) retention, ${count} records: path before`, (store) => before(store, client))
      const ours = await measure(
        `f2) retention, ${count} records: one pass`,
        async (store) => (await prune(store, client, { perPass: 2 * count })).sessionsRemoved,
      )
      const bounded = await measure(
        `f3) retention, ${count} records: a pass of 500`,
        async (store) => (await prune(store, client, { perPass: 500 })).sessionsRemoved,
      )
      console.log(
        `  retention: one pass / path before ${(ours / old).toFixed(2)}x; a bounded pass ${bounded.toFixed(0)} ms`,
      )
    } finally {
      for (const store of stores) await rm(store.dir, { recursive: true, force: true })
    }
  } finally {
    await stopServer(home.paths)
    await home.dispose()
    await rm(dir, { recursive: true, force: true })
  }
}
