// Deadlines hold with no client: the compiled `serve` whose client disconnects (and, as the SDK client
// does, escalates to SIGTERM and SIGKILL) hands its tasks to a detached supervisor, which keeps their
// deadlines, records truthful durations, releases the workspace, then leaves and stops the shared
// server nobody needs. Before, such a task stayed `running` with its lock until some later `serve`.
import { describe, expect, test } from "bun:test"
import { readdir } from "node:fs/promises"
import { createRepository } from "../../src/model/demo"
import { readServerRecord } from "../../src/opencode/server"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { newTaskId } from "../../src/engine/records/tasks"
import { isFinished } from "../../src/engine/records/status"
import { alive, spawn } from "../../src/util/process"
import { writeJson } from "../../src/util/fs"
import { leftoversAfter } from "../helpers/leftovers"
import { BINARY, connectStdio } from "../helpers/mcp"
import { until } from "../helpers/until"
import { jsonFiles, orphanRecord, taskRecords } from "../helpers/records"
import { homeFor, quick, slowEdit } from "./_home"

const world = homeFor({
  slow_edit: slowEdit(5000),
  quick,
  hung: { turns: [{ steps: [{ text: "never", delayMs: 3_600_000 }] }] },
})

const records = () => taskRecords(world.home.paths.tasksDir)

async function disconnectDuring(task: string, env: Record<string, string | undefined> = {}, kill = false) {
  const repo = await createRepository("oc-orch-client-", { "README.md": "# r\n" })
  world.dirs.push(repo)
  const mcp = await connectStdio({ ...world.home.env, ...env })
  void mcp.client
    .callTool(
      { name: task.includes("hung") ? "scout" : "worker", arguments: { cwd: repo, task } },
      {
        timeout: 600_000,
      },
    )
    .catch(() => undefined)
  await until(async () => (await records()).some((r) => r.status === "running"), 20_000)
  const server = (await readServerRecord(world.home.paths))!
  // SIGKILL leaves the process no time to hand anything over: only its watchdog can.
  if (kill) process.kill(mcp.pid, "SIGKILL")
  await mcp.close()
  return { repo, pid: mcp.pid, server }
}

test("a worker whose client disconnects still finishes: edit on disk, truthful record, lock released, no process left", async () => {
  const { repo, pid, server } = await disconnectDuring("[script:slow_edit] edit")
  expect(await until(() => !alive(pid), 10_000)).toBe(true)
  expect(await until(async () => (await records()).every((r) => r.status !== "running"), 30_000)).toBe(true)
  const record = (await records()).find((r) => r.title.startsWith("worker"))!
  expect(record.status).toBe("succeeded")
  expect(record.result!.durationMs).toBeGreaterThan(4000)
  expect(await Bun.file(`${repo}/edited.txt`).text()).toBe("edited\n")
  expect(await jsonFiles(world.home.paths.locksDir)).toEqual([])
  // The last MCP process left: the shared server is stopped, nothing is orphaned.
  expect(await until(() => !alive(server.pid), 15_000)).toBe(true)
  // The record goes just after the server does.
  expect(await until(async () => (await readServerRecord(world.home.paths)) === undefined, 10_000)).toBe(true)
  expect(await until(async () => (await readdir(world.home.paths.leasesDir)).length === 0, 15_000)).toBe(true)
  expect(await leftoversAfter(world.home.root)).toEqual([])
}, 90_000)

// Codex, past its tool timeout, cancels the call (notifications/cancelled) and exits soon after, closing
// serve's stdin. Played here on the wire as one write, the cancel and the end of the connection together, so
// no moment lies between them in which serve could still see its connection up. Before, serve told a cancel
// from a closing connection by asking, a moment later, whether it was still connected, and stopped without
// waiting for the cancel: the task was left running for the watchdog. (The first test is the other side: a
// client that leaves without cancelling lets its task finish.)
test("a client that cancels its call and closes at once: serve finishes the cancel before it stops, and the task ends cancelled", async () => {
  const repo = await createRepository("oc-orch-client-", { "README.md": "# r\n" })
  world.dirs.push(repo)
  const serve = Bun.spawn([BINARY, "serve"], {
    env: world.home.env as Record<string, string>,
    stdin: "pipe",
    stdout: "ignore",
    stderr: "ignore",
  })
  const line = (message: object) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`
  const clientInfo = { name: "cancelling", version: "1" }
  serve.stdin.write(
    line({ id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo } }) +
      line({ method: "notifications/initialized" }) +
      line({
        id: 1,
        method: "tools/call",
        params: { name: "scout", arguments: { cwd: repo, task: "[script:hung] cancel me" } },
      }),
  )
  void serve.stdin.flush()
  const mine = async () => (await records()).find((r) => r.brief?.includes("cancel me"))
  // Cancelled while the call follows the task's session, as Codex's timeout does; a first call starts the server.
  expect(await until(async () => (await mine())?.sessionID !== undefined, 60_000)).toBe(true)
  const server = (await readServerRecord(world.home.paths))!
  serve.stdin.write(line({ method: "notifications/cancelled", params: { requestId: 1, reason: "timed out" } }))
  serve.stdin.end()
  // Nothing kills serve here: it stops on its own, once the cancel settled.
  expect(await until(() => !alive(serve.pid), 60_000)).toBe(true)
  expect((await mine())?.status).toBe("cancelled")
  expect(await until(() => !alive(server.pid), 15_000)).toBe(true)
  expect(await until(async () => (await readdir(world.home.paths.leasesDir)).length === 0, 15_000)).toBe(true)
  expect(await leftoversAfter(world.home.root)).toEqual([])
}, 120_000)

// What Codex does when it drops its MCP client: its process group is killed outright (rmcp's child
// process is kill-on-drop) right after the cancel went out, so serve may have no moment to finish it. The
// cancel is on disk before anything stops, and the watchdog that takes the task over finishes it. Made
// exact rather than raced: the shared server is stopped (SIGSTOP) while serve hears the cancel, so its
// abort cannot finish, and serve is killed once the record holds the cancel. On the code before, no
// record ever held it. (The SIGKILL test below is the other side: a task whose process is killed
// without a cancel goes on to its end.)
test("a client that cancels its call and kills serve straight after: the watchdog finishes the cancel, and the task ends cancelled", async () => {
  const repo = await createRepository("oc-orch-client-", { "README.md": "# r\n" })
  world.dirs.push(repo)
  const mcp = await connectStdio(world.home.env)
  const controller = new AbortController()
  const call = mcp.client
    .callTool(
      { name: "scout", arguments: { cwd: repo, task: "[script:hung] killed after" } },
      { signal: controller.signal, timeout: 600_000 },
    )
    .catch(() => undefined)
  const mine = async () => (await records()).find((r) => r.brief?.includes("killed after"))
  expect(await until(async () => (await mine())?.sessionID !== undefined, 60_000)).toBe(true)
  const server = (await readServerRecord(world.home.paths))!
  process.kill(server.pid, "SIGSTOP")
  try {
    controller.abort("timed out")
    expect(await until(async () => (await mine())?.cancelAskedAt !== undefined, 20_000)).toBe(true)
    process.kill(mcp.pid, "SIGKILL")
  } finally {
    process.kill(server.pid, "SIGCONT")
  }
  await call
  await mcp.close()
  expect(await until(async () => isFinished((await mine())?.status ?? "running"), 60_000)).toBe(true)
  const record = (await mine())!
  expect(record.status).toBe("cancelled")
  expect(record.ownerPid).not.toBe(mcp.pid)
  expect(await until(() => !alive(server.pid), 15_000)).toBe(true)
  expect(await until(async () => (await readdir(world.home.paths.leasesDir)).length === 0, 15_000)).toBe(true)
  expect(await leftoversAfter(world.home.root)).toEqual([])
}, 150_000)

test("a hung model with no client: the deadline still fires, the record says timed_out, and everything stops", async () => {
  const { pid, server } = await disconnectDuring("[script:hung] look", {
    OPENCODE_MCP_ORCHESTRATOR_BRIDGE_TIMEOUT_MS: "12000",
  })
  expect(await until(() => !alive(pid), 10_000)).toBe(true)
  expect(await until(async () => (await records()).every((r) => r.status !== "running"), 60_000)).toBe(true)
  const record = (await records()).find((r) => r.brief?.includes("[script:hung] look"))!
  expect(record.status).toBe("timed_out")
  expect(record.result!.durationMs).toBeGreaterThanOrEqual(11_000)
  expect(await until(() => !alive(server.pid), 15_000)).toBe(true)
  expect(await until(async () => (await readdir(world.home.paths.leasesDir)).length === 0, 15_000)).toBe(true)
  expect(await leftoversAfter(world.home.root)).toEqual([])
}, 120_000)

test("an MCP server killed with SIGKILL mid-task, and no successor: its watchdog finishes the task and stops everything", async () => {
  const { repo, pid, server } = await disconnectDuring("[script:slow_edit] edit", {}, true)
  expect(alive(pid)).toBe(false)
  expect(await until(async () => (await records()).every((r) => r.status !== "running"), 30_000)).toBe(true)
  const record = (await records()).filter((r) => r.title.startsWith("worker")).at(-1)!
  expect(record.status).toBe("succeeded")
  expect(await Bun.file(`${repo}/edited.txt`).text()).toBe("edited\n")
  expect(await jsonFiles(world.home.paths.locksDir)).toEqual([])
  expect(await until(() => !alive(server.pid), 15_000)).toBe(true)
  expect(await until(async () => (await readdir(world.home.paths.leasesDir)).length === 0, 15_000)).toBe(true)
  expect(await leftoversAfter(world.home.root)).toEqual([])
}, 90_000)

// The handover can come before the dead process created the task's session (the race the tests above
// lose now and then): the next process starts the session and sends the brief, under the task's own
// deadline. Written as a record left by a dead process, so the moment is exact rather than raced.
describe("a task left before its session existed", () => {
  async function orphan(deadline: number, more: Partial<TaskRecord> = {}) {
    const repo = await createRepository("oc-orch-orphan-", { "README.md": "# r\n" })
    world.dirs.push(repo)
    const dead = spawn(["true"])
    await dead.exited
    const id = newTaskId()
    const now = new Date().toISOString()
    const record = orphanRecord(id, now, {
      workspace: repo,
      ownerPid: dead.pid,
      deadline,
      // A brief of its own: the scripted model tells conversations apart by it when no session header came.
      brief: `[script:quick] look (${id})`,
      ...more,
    })
    await writeJson(`${world.home.paths.tasksDir}/${id}.json`, record)
    const mcp = await connectStdio(world.home.env)
    try {
      await mcp.client.callTool({ name: "task_list", arguments: {} })
      expect(await until(async () => (await records()).find((r) => r.id === id)?.status !== "running", 30_000)).toBe(
        true,
      )
    } finally {
      await mcp.close()
    }
    return (await records()).find((r) => r.id === id) as unknown as TaskRecord
  }

  test("the next process starts the session and sends the brief: the task succeeds with its report", async () => {
    const record = await orphan(Date.now() + 60_000)
    expect(record.status).toBe("succeeded")
    expect(record.result?.report).toBe("quick report")
    expect(record.sessions).toHaveLength(1)
  }, 60_000)

  test("attack: a cancel asked before its process died is finished, not started: the task ends cancelled, no session", async () => {
    const record = await orphan(Date.now() + 60_000, { cancelAskedAt: new Date().toISOString() })
    expect(record.status).toBe("cancelled")
    expect(record.sessions).toEqual([])
  }, 60_000)

  test("control: past its deadline it is not started, and says it never began", async () => {
    const record = await orphan(Date.now() - 1)
    expect(record.status).toBe("interrupted")
    expect(record.note).toContain("before the task's session started")
    expect(record.sessions).toEqual([])
  }, 60_000)
})
