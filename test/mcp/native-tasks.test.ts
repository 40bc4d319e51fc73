// The tasks extension (`io.modelcontextprotocol/tasks`, protocol 2026-07-28; src/mcp/tasks.ts) on the real
// OpenCode with the scripted model. The server is served as `serve` serves it (serveStdio picks the era
// from the opening; here over an in-memory pair, without serve's line gate), and spoken to in raw JSON-RPC
// (the SDK's Client takes no `resultType: "task"` answer); the extension's own schemas
// (@modelcontextprotocol/ext-tasks) judge every answer. A client whose envelope declares the extension gets
// a delegating call (scout, worker, runner, delegate_parallel, task_continue) that outlasts the sync
// budget back as a task, follows it with tasks/get, which finally carries the call's own result (an error
// result for a delegation that failed), and stops it with tasks/cancel. Controls: a 2026-07-28 client
// that does not declare the extension, and a 2025 client that initialized, get today's `running` for the
// same call from the same engine; a tool that is no delegation stays a result for a declaring client.
// The 2025-11-25 experimental tasks (a `task` parameter on tools/call, tasks/result, the client's `tasks`
// capability, `execution.taskSupport` in tools/list) went with SDK v1, and what was specific to them has
// no counterpart here: abandoning a tasks/result wait, a declaring client calling without `task`, and the
// refusal of `task` on a tool that is no delegation.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { Client, type CallToolResult } from "@modelcontextprotocol/client"
import { CreateTaskResultV2Schema, GetTaskResultV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2"
import type { Delegations } from "../../src/engine/lifecycle"
import { TASK_ID } from "../../src/engine/records/tasks"
import { connect as connectOpencode } from "../../src/opencode/client"
import { readServerRecord } from "../../src/opencode/server"
import { slowTurn } from "../helpers/slow-turn"
import { type EngineWorld, engineWorld } from "../helpers/in-process"
import { type Modern, modernWire, servedWire } from "./_modern-wire"
import { makeRepo, startWorld, stopWorld, structured, taskFiles, text, type World } from "./_setup"

/** How long a call waits before it answers `running` (or, to a client declaring the extension, a task). */
const SYNC_BUDGET_MS = 1000
/** How long a slow script's report comes after its first step: well past the sync budget. */
const SLOW_MS = 4000

let world: World
let engine: EngineWorld
let delegations: Delegations
/** Declares the tasks extension. */
let tasking: Modern
const closers: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  const late = (text: string) => ({ text, delayMs: SLOW_MS })
  world = await startWorld({
    slow: slowTurn("slow report", SLOW_MS),
    // Two slow turns: a task, then its continuation.
    twice: { turns: [...slowTurn("slow report", SLOW_MS).turns, ...slowTurn("again report", SLOW_MS).turns] },
    // Refused for a bad key after the sync budget: a failure nothing retries.
    refused: {
      turns: [
        {
          steps: [
            { tool: "glob", args: { pattern: "*.md" }, delayMs: SLOW_MS },
            { text: "never", fail: { kind: "401", times: "always" } },
          ],
        },
      ],
    },
    hang: { turns: [{ steps: [{ text: "too late", delayMs: 120_000 }] }] },
    edit: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "src/added.ts", content: "export const a = 1\n" } },
            late("added"),
          ],
        },
      ],
    },
    check: {
      turns: [
        {
          steps: [
            { tool: "sandbox_run_ro", args: { command: "echo checked", timeout_seconds: 60 } },
            late("{{lastToolOutput}}"),
          ],
        },
      ],
    },
  })
  engine = engineWorld(world.home.env, { syncBudgetMs: SYNC_BUDGET_MS })
  delegations = engine.delegations
  tasking = await modern({ extension: true })
}, 60_000)

afterAll(async () => {
  await engine?.close(closers)
  await stopWorld(world)
})

/** A 2026-07-28 client; `extension` declares the tasks extension. */
const modern = (options: { extension: boolean }) => modernWire(delegations, closers, options)
const served = () => servedWire(delegations, closers)

/** The extension's task a delegating call came back as, checked against the extension's schema. */
async function asTask(name: string, args: Record<string, unknown>) {
  const answered = await tasking.call(name, args)
  expect(answered.resultType).toBe("task")
  const task = CreateTaskResultV2Schema.parse(answered)
  // Kept as long as the record; the client is told how often to poll.
  expect(task.ttlMs).toBeNull()
  expect(task.pollIntervalMs).toBeGreaterThan(0)
  return task
}

/** tasks/get until the task has ended, at the interval the server asks for; the status messages seen on the way. */
async function settled(id: string) {
  const messages: string[] = []
  for (;;) {
    const task = await tasking.get(id)
    expect(task.taskId).toBe(id)
    if (task.statusMessage) messages.push(task.statusMessage)
    if (task.status !== "working") return { task, messages }
    await Bun.sleep(task.pollIntervalMs ?? 1000)
  }
}

/** The ended task's result: a completed task carries the call's own CallToolResult. */
async function resultOf(id: string): Promise<CallToolResult> {
  const { task } = await settled(id)
  if (task.status !== "completed") throw new Error(`task ${id} ended ${task.status}: ${task.statusMessage}`)
  return task.result as CallToolResult
}

/** The same task's result as its own tool gives it. */
const ownResult = async (id: string) =>
  (await tasking.call("task_result", { task_id: id })) as unknown as CallToolResult

async function busy(directory: string, sessionID: string): Promise<boolean> {
  const server = await readServerRecord(world.home.paths)
  const status = await connectOpencode(server!, { standIns: world.home.paths.opencodeDirsDir }).session.status({
    directory,
  })
  const state = (status.data as Record<string, { type: string }> | undefined)?.[sessionID]
  return state !== undefined && state.type !== "idle"
}

test("a scout outlasting the sync budget becomes a task; tasks/get follows it and carries the call's own result", async () => {
  const repo = await makeRepo(world)
  const task = await asTask("scout", { cwd: repo, task: "Look around. [script:slow]" })
  // Our task id is the extension's task id, and the task is still working when the call returns.
  expect(task.taskId).toMatch(TASK_ID)
  expect(task.status).toBe("working")
  const { task: done, messages } = await settled(task.taskId)
  expect(done.status).toBe("completed")
  expect(done.statusMessage).toBe("ended succeeded")
  // The status messages are the record's progress lines while it worked.
  const record = await delegations.read(task.taskId)
  expect(messages.filter((line) => record!.progress.includes(line)).length).toBeGreaterThan(0)
  const result = await resultOf(task.taskId)
  expect(structured(result)).toMatchObject({ task_id: task.taskId, status: "succeeded", report: "slow report" })
  expect(result.isError).toBeFalsy()
  // The same structured result and text the task's own tool gives.
  const own = await ownResult(task.taskId)
  expect(structured(result)).toEqual(structured(own))
  expect(text(result)).toBe(text(own))
}, 120_000)

test("a delegation that fails is a completed task whose result is the tool's error", async () => {
  const repo = await makeRepo(world)
  const task = await asTask("scout", { cwd: repo, task: "Look. [script:refused]" })
  const { task: done } = await settled(task.taskId)
  expect(done.status).toBe("completed")
  expect(done.statusMessage).toStartWith("ended failed")
  const result = await resultOf(task.taskId)
  expect(result.isError).toBe(true)
  expect(structured(result)).toMatchObject({ task_id: task.taskId, status: "failed", error_kind: "auth" })
  expect(structured(result)).toEqual(structured(await ownResult(task.taskId)))
}, 120_000)

test("control: a 2026-07-28 client without the extension, and a 2025 client, get today's running for the same call", async () => {
  const repo = await makeRepo(world)
  const brief = { cwd: repo, task: "Look. [script:slow]" }
  // The SDK's own Client on 2026-07-28, declaring no extension. (`serve`'s gate sends its discover to
  // `initialize`, src/mcp/gate.ts; what is checked here is the server's answer to its requests' envelopes.)
  const plain = new Client(
    { name: "orchestrator-tests", version: "1" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  )
  await plain.connect(await served())
  closers.push(() => plain.close())
  const today = structured(await plain.callTool({ name: "scout", arguments: brief }))
  expect(today).toMatchObject({ status: "running" })
  expect(today.task_id).toMatch(TASK_ID)
  expect(today.next).toContain("task_status")
  // Followed as today: task_status until it ended, then task_result.
  let status = today
  while (status.status === "running")
    status = structured(
      await plain.callTool({ name: "task_status", arguments: { task_id: today.task_id, wait_seconds: 10 } }),
    )
  const result = await plain.callTool({ name: "task_result", arguments: { task_id: today.task_id } })
  expect(structured(result)).toMatchObject({ status: "succeeded", report: "slow report" })

  // A 2025 client that initialized, even one sending the 2025 `task` parameter: the call runs, the reply is no task.
  const legacy = new Client({ name: "orchestrator-tests", version: "1" }, { capabilities: { tasks: {} } as never })
  await legacy.connect(await served())
  closers.push(() => legacy.close())
  expect(legacy.getNegotiatedProtocolVersion()).toStartWith("2025-")
  const before = (await taskFiles(world)).length
  const params = { name: "scout", arguments: brief, task: { ttl: 60_000 } }
  const old = (await legacy.request({ method: "tools/call", params } as never)) as CallToolResult
  expect(structured(old)).toMatchObject({ status: "running" })
  expect((old as Record<string, unknown>).resultType).toBeUndefined()
  expect((await taskFiles(world)).length).toBe(before + 1)

  // A declaring client's call to a tool that is no delegation stays a result, `running` included.
  const oldId = structured(old).task_id!
  const own = await tasking.call("task_status", { task_id: oldId })
  expect(own.resultType).toBe("complete")
  expect(structured(own).status).toBe("running")
  expect((await tasking.call("task_list", {})).resultType).toBe("complete")
  await delegations.follow(oldId)
}, 120_000)

test("tasks/cancel cancels the delegation and stops its OpenCode session; a second cancel is refused", async () => {
  const repo = await makeRepo(world)
  const task = await asTask("scout", { cwd: repo, task: "Wait. [script:hang]" })
  let record = await delegations.read(task.taskId)
  while (!record?.sessionID) {
    await Bun.sleep(100)
    record = await delegations.read(task.taskId)
  }
  // Control: the session is working before the cancel.
  while (!(await busy(repo, record.sessionID))) await Bun.sleep(100)
  expect((await tasking.get(task.taskId)).status).toBe("working")
  const cancelled = await tasking.cancel(task.taskId)
  expect(cancelled.resultType).toBe("complete")
  expect((await delegations.read(task.taskId))?.status).toBe("cancelled")
  expect(await busy(repo, record.sessionID)).toBe(false)
  // A cancelled task carries no result.
  const after = await tasking.send("tasks/get", { taskId: task.taskId })
  expect(GetTaskResultV2Schema.parse(after.result).status).toBe("cancelled")
  expect(after.result).not.toHaveProperty("result")
  // Its own tool still says how it ended.
  expect(structured(await ownResult(task.taskId)).status).toBe("cancelled")
  // Cancelling an ended task is acknowledged as the first cancel was (the extension's cancel is idempotent), and
  // changes nothing.
  expect((await tasking.cancel(task.taskId)).resultType).toBe("complete")
  expect((await delegations.read(task.taskId))?.status).toBe("cancelled")
  // Control: a task that does not exist is an error.
  expect((await tasking.send("tasks/cancel", { taskId: "t_0000000000000000" })).error?.code).toBe(-32602)
}, 120_000)

test.each([
  ["worker", { task: "Add a. [script:edit]" }, { status: "succeeded", report: "added" }],
  ["runner", { command: "echo checked", objective: "Does it pass? [script:check]" }, { status: "succeeded" }],
])(
  "a %s outlasting the sync budget becomes a task too, and its task's result is the tool's own",
  async (name, args, expected) => {
    const repo = await makeRepo(world)
    const task = await asTask(name, { cwd: repo, ...args })
    expect(task.taskId).toMatch(TASK_ID)
    const result = await resultOf(task.taskId)
    expect(structured(result)).toMatchObject({ task_id: task.taskId, ...expected })
    if (name === "worker") expect(structured(result).files_changed).toEqual([{ path: "src/added.ts", change: "added" }])
    if (name === "runner") expect(structured(result).exit_code).toBe(0)
    expect(structured(result)).toEqual(structured(await ownResult(task.taskId)))
  },
  120_000,
)

test("delegate_parallel and task_continue become tasks too: a group's task gives the group's result", async () => {
  const [a, b] = [await makeRepo(world), await makeRepo(world)]
  const briefs = [a, b].map((cwd) => ({ role: "scout", cwd, task: "Answer. [script:twice]" }))
  const task = await asTask("delegate_parallel", { briefs })
  expect(task.taskId).toStartWith("group_")
  expect(task.status).toBe("working")
  const { task: done, messages } = await settled(task.taskId)
  expect(done.status).toBe("completed")
  expect(messages.at(-1)).toBe("2 of 2 members finished")
  const result = await resultOf(task.taskId)
  expect(structured(result)).toMatchObject({ group_id: task.taskId, status: "finished" })
  const members = structured(result).tasks as { task_id: string; status: string; report: string }[]
  expect(members.map((member) => [member.status, member.report])).toEqual([
    ["succeeded", "slow report"],
    ["succeeded", "slow report"],
  ])
  const followed = await tasking.call("delegate_parallel", { group_id: task.taskId })
  expect(followed.resultType).toBe("complete")
  expect(structured(result)).toEqual(structured(followed))

  const continued = await asTask("task_continue", { task_id: members[0]!.task_id, task: "Again. [script:twice]" })
  expect(continued.taskId).toBe(members[0]!.task_id)
  expect(continued.status).toBe("working")
  const again = await resultOf(members[0]!.task_id)
  expect(structured(again)).toMatchObject({ task_id: members[0]!.task_id, status: "succeeded", report: "again report" })
  expect(structured(again)).toEqual(structured(await ownResult(members[0]!.task_id)))
}, 120_000)

test("bad input: a malformed, unknown or garbage task id, or a call starting nothing, is a clear error", async () => {
  const repo = await makeRepo(world)
  const get = (id: string) => tasking.get(id)
  await expect(get("../../../etc/passwd")).rejects.toThrow('"../../../etc/passwd" is not a task id.')
  await expect(get("task_zz_00000000")).rejects.toThrow("No task task_zz_00000000.")
  await expect(get("task_zz_00000000")).rejects.toThrow("next: ")
  await expect(get("group_zz_00000000")).rejects.toThrow("No group group_zz_00000000.")
  await expect(tasking.cancel("task_zz_00000000")).rejects.toThrow("No task task_zz_00000000.")
  // Requests whose params are no task id at all are refused as invalid params.
  for (const params of [{}, { taskId: 7 }]) {
    const refused = await tasking.send("tasks/get", params)
    expect(refused.error?.code).toBe(-32602)
  }
  // A record that is garbage is set aside, and the id is answered as unknown, not with a crash.
  await Bun.write(`${world.home.paths.tasksDir}/task_zz_11111111.json`, "{not json")
  await expect(get("task_zz_11111111")).rejects.toThrow("No task task_zz_11111111.")
  await expect(tasking.cancel("task_zz_11111111")).rejects.toThrow("No task")
  await Bun.write(`${world.home.paths.groupsDir}/group_zz_22222222.json`, JSON.stringify({ version: 1, tasks: 7 }))
  await expect(get("group_zz_22222222")).rejects.toThrow("No group group_zz_22222222.")
  await expect(tasking.cancel("group_zz_22222222")).rejects.toThrow("No group")
  // A call that starts nothing (its tool refuses it) says why, with the tool's own next step, and is no task.
  const before = (await taskFiles(world)).length
  const refused = await tasking.call("scout", { cwd: `${repo}/missing`, task: "Look. [script:slow]" })
  expect(refused).toMatchObject({ resultType: "complete", isError: true })
  expect(text(refused)).toContain("next: ")
  expect((await taskFiles(world)).length).toBe(before)
}, 60_000)
