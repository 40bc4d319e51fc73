// Native MCP tasks (src/mcp/tasks.ts) on the real OpenCode with the scripted model, through the SDK
// client: a client that declares tasks gets a delegating call back as a task at once, polls it with
// tasks/get, reads the call's own structured result with tasks/result and stops it with tasks/cancel.
// Controls: a client that does not declare tasks, served by the same engine, gets today's answers.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import {
  CreateTaskResultSchema,
  type CallToolRequest,
  type CallToolResult,
  CallToolResultSchema,
} from "@modelcontextprotocol/sdk/types.js"
import { readFlags } from "../../src/config/flags"
import { Delegations } from "../../src/engine/lifecycle"
import { Runtime } from "../../src/engine/capacity/runtime"
import { TASK_ID } from "../../src/engine/records/tasks"
import { createServer } from "../../src/mcp/server"
import { backendOf } from "../helpers/in-process"
import { connect as connectOpencode } from "../../src/opencode/client"
import { readServerRecord } from "../../src/opencode/server"
import { slowTurn } from "../helpers/slow-turn"
import { makeRepo, startWorld, stopWorld, structured, taskFiles, text, type World } from "./_setup"

let world: World
let runtime: Runtime
let delegations: Delegations
/** Declares tasks. */
let tasking: Client
/** Declares nothing: today's client. */
let plain: Client
const closers: (() => Promise<void>)[] = []

async function client(capabilities: Record<string, unknown>): Promise<Client> {
  const server = createServer(backendOf(delegations))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const connected = new Client({ name: "orchestrator-tests", version: "1" }, { capabilities })
  await connected.connect(clientSide)
  closers.push(async () => {
    await connected.close()
    await server.close()
  })
  return connected
}

beforeAll(async () => {
  world = await startWorld({
    slow: slowTurn("slow report", 3000),
    hang: { turns: [{ steps: [{ text: "too late", delayMs: 120_000 }] }] },
    quick: { turns: [{ steps: [{ text: "quick report" }] }] },
    edit: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "src/added.ts", content: "export const a = 1\n" } },
            { text: "added" },
          ],
        },
      ],
    },
    check: {
      turns: [
        {
          steps: [
            { tool: "sandbox_run_ro", args: { command: "echo checked", timeout_seconds: 60 } },
            { text: "{{lastToolOutput}}" },
          ],
        },
      ],
    },
  })
  runtime = new Runtime(readFlags(world.home.env))
  delegations = new Delegations(runtime, { recover: true })
  tasking = await client({ tasks: {} })
  plain = await client({})
}, 60_000)

afterAll(async () => {
  await delegations?.shutdown()
  for (const close of closers) await close()
  runtime?.close()
  await stopWorld(world)
})

const asTask = (name: string, args: Record<string, unknown>, on = tasking) =>
  on.request(
    { method: "tools/call", params: { name, arguments: args, task: { ttl: 60_000 } } } satisfies CallToolRequest,
    CreateTaskResultSchema,
  )
const taskResult = async (id: string) =>
  (await tasking.experimental.tasks.getTaskResult(id, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult

async function settled(id: string) {
  const messages: string[] = []
  for (;;) {
    const task = await tasking.experimental.tasks.getTask(id)
    if (task.statusMessage) messages.push(task.statusMessage)
    if (task.status !== "working") return { task, messages }
    await Bun.sleep(task.pollInterval ?? 500)
  }
}

async function busy(directory: string, sessionID: string): Promise<boolean> {
  const server = await readServerRecord(world.home.paths)
  const status = await connectOpencode(server!, { standIns: world.home.paths.opencodeDirsDir }).session.status({
    directory,
  })
  const state = (status.data as Record<string, { type: string }> | undefined)?.[sessionID]
  return state !== undefined && state.type !== "idle"
}

test("a scout as a task returns at once; tasks/get follows it; tasks/result is the call's own result", async () => {
  const repo = await makeRepo(world)
  const { task } = await asTask("scout", { cwd: repo, task: "Look around. [script:slow]" })
  // Our task id is the MCP task id, and the task is still working when the call returns.
  expect(task.taskId).toMatch(TASK_ID)
  expect(task.status).toBe("working")
  const { task: done, messages } = await settled(task.taskId)
  expect(done.status).toBe("completed")
  expect(done.statusMessage).toBe("ended succeeded")
  // The status messages are the record's progress lines while it worked.
  const record = await delegations.read(task.taskId)
  expect(messages.filter((line) => record!.progress.includes(line)).length).toBeGreaterThan(0)
  const result = await taskResult(task.taskId)
  expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: task.taskId })
  expect(structured(result)).toMatchObject({ task_id: task.taskId, status: "succeeded", report: "slow report" })
  // The same structured result the task's own tool gives.
  const own = await tasking.callTool({ name: "task_result", arguments: { task_id: task.taskId } })
  expect(structured(result)).toEqual(structured(own))
  expect(text(result)).toBe(text(own))
}, 120_000)

test("control: a client that does not declare tasks gets today's blocking result and tools/list", async () => {
  const repo = await makeRepo(world)
  const answer = structured(
    await plain.callTool({ name: "scout", arguments: { cwd: repo, task: "Look. [script:slow]" } }),
  )
  expect(answer).toMatchObject({ status: "succeeded", report: "slow report" })
  // A client that declares tasks but calls without `task` waits for the result as today.
  const waited = await tasking.callTool({ name: "scout", arguments: { cwd: repo, task: "Look. [script:slow]" } })
  expect(structured(waited)).toMatchObject({ status: "succeeded", report: "slow report" })
  const offered = async (on: Client) =>
    Object.fromEntries((await on.listTools()).tools.map((tool) => [tool.name, tool.execution?.taskSupport]))
  const [today, declared] = [await offered(plain), await offered(tasking)]
  expect(Object.values(today).every((support) => support === undefined || support === "forbidden")).toBe(true)
  for (const name of ["scout", "worker", "runner", "delegate_parallel", "task_continue"])
    expect(declared[name]).toBe("optional")
  expect(declared.task_status).toBe(today.task_status)
  // Even a `task` parameter from it is answered as today: the call runs, the reply is no task.
  const before = (await taskFiles(world)).length
  await expect(asTask("scout", { cwd: repo, task: "Look. [script:quick]" }, plain)).rejects.toThrow(
    "Invalid task creation result",
  )
  expect((await taskFiles(world)).length).toBe(before + 1)
}, 120_000)

test("tasks/cancel cancels the delegation and stops its OpenCode session; a second cancel is refused", async () => {
  const repo = await makeRepo(world)
  const { task } = await asTask("scout", { cwd: repo, task: "Wait. [script:hang]" })
  let record = await delegations.read(task.taskId)
  while (!record?.sessionID) {
    await Bun.sleep(100)
    record = await delegations.read(task.taskId)
  }
  // Control: the session is working before the cancel.
  while (!(await busy(repo, record.sessionID))) await Bun.sleep(100)
  const cancelled = await tasking.experimental.tasks.cancelTask(task.taskId)
  expect(cancelled.status).toBe("cancelled")
  expect((await delegations.read(task.taskId))?.status).toBe("cancelled")
  expect(await busy(repo, record.sessionID)).toBe(false)
  expect(structured(await taskResult(task.taskId)).status).toBe("cancelled")
  const again = tasking.experimental.tasks.cancelTask(task.taskId)
  await expect(again).rejects.toThrow(`Task ${task.taskId} had already ended (cancelled); nothing was cancelled.`)
  await expect(again).rejects.toThrow("next: Call tasks/result.")
}, 120_000)

test("a client abandoning tasks/result stops its wait, not the task: it runs on to its result", async () => {
  const repo = await makeRepo(world)
  const { task } = await asTask("scout", { cwd: repo, task: "Look around. [script:slow]" })
  const wait = new AbortController()
  const abandoned = tasking.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { signal: wait.signal })
  // Control: the task is still working when the wait is abandoned (and the server holds that wait:
  // this answer comes after the tasks/result request on the same ordered transport).
  expect((await tasking.experimental.tasks.getTask(task.taskId)).status).toBe("working")
  wait.abort("gave up")
  await expect(abandoned).rejects.toThrow("gave up")
  expect(structured(await taskResult(task.taskId))).toMatchObject({ status: "succeeded", report: "slow report" })
}, 120_000)

test.each([
  ["worker", { task: "Add a. [script:edit]" }, { status: "succeeded", report: "added" }],
  ["runner", { command: "echo checked", objective: "Does it pass? [script:check]" }, { status: "succeeded" }],
])(
  "a %s runs as a task too, and its task's result is the tool's own",
  async (name, args, expected) => {
    const repo = await makeRepo(world)
    const { task } = await asTask(name, { cwd: repo, ...args })
    expect(task.taskId).toMatch(TASK_ID)
    const result = await taskResult(task.taskId)
    expect(structured(result)).toMatchObject({ task_id: task.taskId, ...expected })
    if (name === "worker") expect(structured(result).files_changed).toEqual([{ path: "src/added.ts", change: "added" }])
    if (name === "runner") expect(structured(result).exit_code).toBe(0)
    const own = await tasking.callTool({ name: "task_result", arguments: { task_id: task.taskId } })
    expect(structured(result)).toEqual(structured(own))
  },
  120_000,
)

test("delegate_parallel and task_continue run as tasks too: a group's task gives the group's result", async () => {
  const [a, b] = [await makeRepo(world), await makeRepo(world)]
  const briefs = [a, b].map((cwd) => ({ role: "scout", cwd, task: "Answer. [script:quick]" }))
  const { task } = await asTask("delegate_parallel", { briefs })
  expect(task.taskId).toStartWith("group_")
  const result = await taskResult(task.taskId)
  expect(structured(result)).toMatchObject({ group_id: task.taskId, status: "finished" })
  const members = structured(result).tasks as { task_id: string; status: string; report: string }[]
  expect(members.map((member) => [member.status, member.report])).toEqual([
    ["succeeded", "quick report"],
    ["succeeded", "quick report"],
  ])
  expect((await settled(task.taskId)).task.status).toBe("completed")
  const followed = await tasking.callTool({ name: "delegate_parallel", arguments: { group_id: task.taskId } })
  expect(structured(result)).toEqual(structured(followed))

  const continued = await asTask("task_continue", { task_id: members[0]!.task_id, task: "Again. [script:quick]" })
  expect(continued.task.taskId).toBe(members[0]!.task_id)
  expect(structured(await taskResult(members[0]!.task_id))).toMatchObject({ status: "succeeded" })
}, 120_000)

test("bad input: a malformed, unknown or garbage task id, or a call starting nothing, is a clear error", async () => {
  const repo = await makeRepo(world)
  const get = (id: string) => tasking.experimental.tasks.getTask(id)
  await expect(get("../../../etc/passwd")).rejects.toThrow('"../../../etc/passwd" is not a task id.')
  await expect(get("task_zz_00000000")).rejects.toThrow("No task task_zz_00000000.")
  await expect(get("task_zz_00000000")).rejects.toThrow("next: ")
  await expect(get("group_zz_00000000")).rejects.toThrow("No group group_zz_00000000.")
  // A record that is garbage is set aside, and the id is answered as unknown, not with a crash.
  await Bun.write(`${world.home.paths.tasksDir}/task_zz_11111111.json`, "{not json")
  await expect(get("task_zz_11111111")).rejects.toThrow("No task task_zz_11111111.")
  await expect(tasking.experimental.tasks.getTaskResult("task_zz_11111111")).rejects.toThrow("No task")
  await Bun.write(`${world.home.paths.groupsDir}/group_zz_22222222.json`, JSON.stringify({ version: 1, tasks: 7 }))
  await expect(get("group_zz_22222222")).rejects.toThrow("No group group_zz_22222222.")
  await expect(tasking.experimental.tasks.cancelTask("group_zz_22222222")).rejects.toThrow("No group")
  // A tool that is no delegation does not run as a task, and the error says which do.
  await expect(asTask("task_list", {})).rejects.toThrow("task_list does not run as a task.")
  await expect(asTask("task_list", {})).rejects.toThrow("next: Call it without task; scout, worker, runner")
  // A call that starts nothing (its tool refuses it) says why, with the tool's own next step.
  const before = (await taskFiles(world)).length
  const refused = asTask("scout", { cwd: `${repo}/missing`, task: "Look. [script:quick]" })
  await expect(refused).rejects.toThrow("next: ")
  expect((await taskFiles(world)).length).toBe(before)
}, 60_000)
