// A question asked while a task runs in the background, through the tasks extension (2026-07-28), on the real
// OpenCode with the scripted model: the call outlasts its sync budget and comes back as a task; the delegated
// agent then asks, and tasks/get reports `input_required` with the same form the relay puts; tasks/update with
// the person's reply under its key ends the wait, the answer reaches the model, and tasks/get finally carries
// the report. Controls: a client that declares no form sees the task `working` while it waits, and answers with
// task_respond; a decline reaches OpenCode as a dismissal. Attacks: an update for a task that waits on nothing,
// one without an answer under the key, and a second answer to a question already answered are refused.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { CreateTaskResultV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2"
import type { Delegations } from "../../src/engine/lifecycle"
import { QUESTION } from "../helpers/question"
import { until } from "../helpers/until"
import { type EngineWorld, engineWorld } from "../helpers/in-process"
import { type Modern, modernWire } from "./_modern-wire"
import { makeRepo, startWorld, stopWorld, type World } from "./_setup"

const SYNC_BUDGET_MS = 1000
/** The question comes this long after the task starts: well past the sync budget. */
const LATE_MS = 2500

let world: World
let engine: EngineWorld
let delegations: Delegations
const closers: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  world = await startWorld(
    {
      ask_late: {
        turns: [
          {
            steps: [
              { tool: "question", args: { questions: [QUESTION] }, delayMs: LATE_MS },
              { text: "Asked. {{lastToolOutput}}" },
            ],
          },
          // A dismissed question ends OpenCode's turn: the product asks once for the report.
          { steps: [{ text: "Reported without an answer." }] },
        ],
      },
    },
    { policy: { relay: ["question"], respondWaitSeconds: 60, requireTier: false } },
  )
  engine = engineWorld(world.home.env, { syncBudgetMs: SYNC_BUDGET_MS })
  delegations = engine.delegations
}, 60_000)

afterAll(async () => {
  await engine?.close(closers)
  await stopWorld(world)
})

const questionResult = () => world.model.toolResults().findLast((result) => result.tool === "question")

/** A scout that asks after its sync budget, as the task the call came back as. */
async function askingTask(client: Modern): Promise<string> {
  const repo = await makeRepo(world)
  world.model.reset()
  const answered = await client.call("scout", { cwd: repo, task: "[script:ask_late] pick a name" })
  return CreateTaskResultV2Schema.parse(answered).taskId
}

/** tasks/get until `status`, at the interval the server asks for. */
async function reaches(client: Modern, id: string, status: string) {
  for (;;) {
    const task = await client.get(id)
    if (task.status === status) return task
    if (task.status === "completed" || task.status === "failed" || task.status === "cancelled")
      throw new Error(`task ${id} ended ${task.status} before ${status}: ${task.statusMessage}`)
    await Bun.sleep(task.pollIntervalMs ?? 500)
  }
}

const report = (task: object) =>
  String((((task as { result?: unknown }).result as CallToolResult).structuredContent as { report?: string }).report)

test("tasks/get hands out the question as input_required with the relay's form; tasks/update's answer reaches the model", async () => {
  const client = await modernWire(delegations, closers, { extension: true, forms: true })
  const id = await askingTask(client)
  const waiting = await reaches(client, id, "input_required")
  const request = (waiting as { inputRequests?: Record<string, { method: string; params: Record<string, unknown> }> })
    .inputRequests?.question
  expect(request?.method).toBe("elicitation/create")
  expect(JSON.stringify(request?.params)).toContain("countWords")
  const update = await client.send("tasks/update", {
    taskId: id,
    inputResponses: { question: { action: "accept", content: { q1: "tally" } } },
  })
  expect(update.error).toBeUndefined()
  const done = await reaches(client, id, "completed")
  expect(questionResult()?.output).toContain("tally")
  expect(report(done)).toContain("tally")
  // Attack: the same answer again, for a question no longer waiting.
  const again = await client.send("tasks/update", {
    taskId: id,
    inputResponses: { question: { action: "accept", content: { q1: "countWords" } } },
  })
  expect(again.error?.message).toContain("is not waiting for an answer")
}, 120_000)

test("control: declined in the form, the question reaches OpenCode dismissed and the task goes on to its report", async () => {
  const client = await modernWire(delegations, closers, { extension: true, forms: true })
  const id = await askingTask(client)
  await reaches(client, id, "input_required")
  await client.answer("tasks/update", { taskId: id, inputResponses: { question: { action: "decline" } } })
  const done = await reaches(client, id, "completed")
  expect(questionResult()).toMatchObject({ tool: "question", output: "The user dismissed this question" })
  expect(report(done)).toContain("Reported without an answer.")
}, 120_000)

test("attack: an update with no answer under the question's key is refused, and the question keeps waiting", async () => {
  const client = await modernWire(delegations, closers, { extension: true, forms: true })
  const id = await askingTask(client)
  await reaches(client, id, "input_required")
  const stray = await client.send("tasks/update", {
    taskId: id,
    inputResponses: { other: { action: "accept", content: { q1: "tally" } } },
  })
  expect(stray.error?.message).toContain('no answer under "question"')
  expect((await client.get(id)).status).toBe("input_required")
  await client.answer("tasks/update", {
    taskId: id,
    inputResponses: { question: { action: "accept", content: { q1: "countWords" } } },
  })
  expect(report(await reaches(client, id, "completed"))).toContain("countWords")
}, 120_000)

test("control: a client that declares no form sees the task working while it waits, and task_respond answers it", async () => {
  const client = await modernWire(delegations, closers, { extension: true })
  const id = await askingTask(client)
  const waiting = async () => (await delegations.read(id))?.waiting !== undefined
  expect(await until(waiting, 60_000)).toBe(true)
  expect((await client.get(id)).status).toBe("working")
  const answered = (await client.call("task_respond", { task_id: id, answer: "tally" })) as CallToolResult
  expect(answered.isError).toBeFalsy()
  const done = await reaches(client, id, "completed")
  expect(questionResult()?.output).toContain("tally")
  expect(report(done)).toContain("tally")
}, 120_000)
