// A delegated agent's question on protocol revision 2026-07-28 (src/mcp/input-rounds.ts), on the real OpenCode
// with the scripted model: the revision has no requests from server to client, so the scout call comes back
// `input_required` with the form while the task waits, and the client calls again with the person's answer and
// the sealed `requestState`; the answer reaches the model, and that call brings the report. The server is
// served as `serve` serves it (serveStdio, here over an in-memory pair) to the SDK's own 2026-07-28 client,
// once in manual mode to read the wire and once fulfilling the rounds itself through its elicitation handler.
// Attacks: a `requestState` the client altered, one from a flow that has ended, one bound to another tool.
// Controls: a declining person and a client that cannot show a form reach what a 2025 client does (the
// question dismissed, the report without an answer); the genuine state is honoured.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { Client, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/client"
import { InMemoryTransport } from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import type { Delegations } from "../../src/engine/lifecycle"
import { isFinished } from "../../src/engine/terms"
import { createServer } from "../../src/mcp/server"
import { backendOf, type EngineWorld, engineWorld } from "../helpers/in-process"
import { askingTurns, QUESTION } from "../helpers/question"
import { until } from "../helpers/until"
import { makeRepo, startWorld, stopWorld, structured, type World } from "./_setup"

/** How long an ask waits for its round: the least the flag allows, so the lapse test is short. */
const RELAY_WAIT_MS = 1000

let world: World
let engine: EngineWorld
let delegations: Delegations
const closers: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  world = await startWorld(
    { ask: { turns: askingTurns("No answer from the person; reporting without one.") } },
    // A question no person can be asked is dismissed at once here, as before task_respond (respond.test.ts).
    { policy: { relay: ["question"], respondWaitSeconds: 0 } },
  )
  engine = engineWorld(world.home.env, { relayWaitMs: RELAY_WAIT_MS })
  delegations = engine.delegations
}, 60_000)

afterAll(async () => {
  await engine?.close(closers)
  await stopWorld(world)
})

/**
 * The SDK's client pinned to 2026-07-28 on `serve`'s server factory. With `person` it declares elicitation and,
 * in `auto` mode, answers each round itself; in manual mode an `input_required` comes back to the test.
 */
async function modern(options: { person?: (params: ElicitRequest["params"]) => ElicitResult; auto: boolean }) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const handle = serveStdio(() => createServer(backendOf(delegations)), { transport: serverSide })
  const client = new Client(
    { name: "orchestrator-tests", version: "1" },
    {
      capabilities: options.person ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      inputRequired: { autoFulfill: options.auto },
    },
  )
  const asked: ElicitRequest["params"][] = []
  if (options.person) {
    const person = options.person
    client.setRequestHandler("elicitation/create", (request) => {
      asked.push(request.params)
      return person(request.params)
    })
  }
  await client.connect(clientSide)
  closers.push(async () => {
    await client.close()
    await handle.close()
  })
  expect(client.getProtocolEra()).toBe("modern")
  return { client, asked }
}

const askScout = (repo: string) => ({
  name: "scout",
  arguments: { cwd: repo, task: `Find out what is needed. [script:ask]` },
})

type Round = {
  resultType?: string
  inputRequests?: Record<string, { method: string; params: unknown }>
  requestState?: string
}

/** A manual client's call that may come back input_required. */
async function callRound(client: Client, params: Record<string, unknown>): Promise<Round & Record<string, unknown>> {
  return (await client.callTool(params as { name: string }, { allowInputRequired: true, timeout: 120_000 })) as never
}

/** What the scripted model was given back for its question. */
const questionResult = () => world.model.toolResults().findLast((result) => result.tool === "question")

test("the question comes back as input_required with the form; the answer in the next round reaches the model, and that round brings the report", async () => {
  const repo = await makeRepo(world)
  const { client } = await modern({ person: () => ({ action: "cancel" }), auto: false })
  world.model.reset()
  const first = await callRound(client, askScout(repo))
  expect(first.resultType).toBe("input_required")
  const entries = Object.entries(first.inputRequests ?? {})
  expect(entries).toHaveLength(1)
  const [key, request] = entries[0]!
  expect(request).toMatchObject({
    method: "elicitation/create",
    params: {
      mode: "form",
      message: `A delegated OpenCode agent asks: ${QUESTION.question}`,
      requestedSchema: { properties: { q1: { type: "string", title: "Name", enum: ["countWords", "tally"] } } },
    },
  })
  expect(typeof first.requestState).toBe("string")
  // The task waits on the person meanwhile; the model has not been answered.
  expect(questionResult()).toBeUndefined()

  const second = await callRound(client, {
    ...askScout(repo),
    inputResponses: { [key!]: { action: "accept", content: { q1: "countWords" } } },
    requestState: first.requestState,
  })
  const result = structured(second)
  expect(result.status).toBe("succeeded")
  expect(result.report).toContain(`"${QUESTION.question}"="countWords"`)
  expect(questionResult()?.output).toContain("countWords")

  // Attack: the same state again, once its flow has ended, is refused with the way to the task.
  const stale = await callRound(client, {
    ...askScout(repo),
    inputResponses: { [key!]: { action: "accept", content: { q1: "tally" } } },
    requestState: first.requestState,
  })
  expect(stale.isError).toBe(true)
  expect(JSON.stringify(stale.content)).toContain(`was no longer waiting for this answer`)
  expect(JSON.stringify(stale.content)).toContain(`task_status with task_id \\"${result.task_id}\\"`)
}, 120_000)

test("attack: a requestState the client altered is refused before any tool runs; another tool's state is refused", async () => {
  const repo = await makeRepo(world)
  const { client } = await modern({ person: () => ({ action: "cancel" }), auto: false })
  const first = await callRound(client, askScout(repo))
  const state = first.requestState!
  const [body, mac] = state.slice(3).split(".")
  const payload = JSON.parse(Buffer.from(body!, "base64url").toString()) as { p: { task: string } }
  const forged = `v1.${Buffer.from(JSON.stringify({ ...payload, p: { ...payload.p, task: "tsk_other" } })).toString("base64url")}.${mac}`
  const key = Object.keys(first.inputRequests ?? {})[0]!
  const answer = { [key]: { action: "accept", content: { q1: "tally" } } }
  await expect(callRound(client, { ...askScout(repo), inputResponses: answer, requestState: forged })).rejects.toThrow(
    /Invalid or expired requestState/,
  )
  const other = await callRound(client, {
    name: "worker",
    arguments: { cwd: repo, task: "Change nothing." },
    inputResponses: answer,
    requestState: state,
  })
  expect(other.isError).toBe(true)
  expect(JSON.stringify(other.content)).toContain("This requestState belongs to a scout call, not worker.")
  // Control: the genuine state still answers the question.
  const done = structured(await callRound(client, { ...askScout(repo), inputResponses: answer, requestState: state }))
  expect(done.report).toContain(`"${QUESTION.question}"="tally"`)
}, 120_000)

test("the SDK's own client fulfils the round through its elicitation handler: the person's pick reaches the model", async () => {
  const repo = await makeRepo(world)
  const { client, asked } = await modern({
    person: () => ({ action: "accept", content: { q1: "tally" } }),
    auto: true,
  })
  world.model.reset()
  const result = structured(await client.callTool(askScout(repo), { timeout: 120_000 }))
  expect(asked).toHaveLength(1)
  expect(asked[0]).toMatchObject({ message: `A delegated OpenCode agent asks: ${QUESTION.question}` })
  expect(result.status).toBe("succeeded")
  expect(result.report).toContain(`"${QUESTION.question}"="tally"`)
  expect(questionResult()?.output).toContain("tally")
}, 120_000)

test("control: the person declines: the question reaches OpenCode dismissed, and the report comes without an answer", async () => {
  const repo = await makeRepo(world)
  const { client, asked } = await modern({ person: () => ({ action: "decline" }), auto: true })
  world.model.reset()
  const result = structured(await client.callTool(askScout(repo), { timeout: 120_000 }))
  expect(asked).toHaveLength(1)
  expect(result.status).toBe("succeeded")
  expect(questionResult()).toMatchObject({ tool: "question", output: "The user dismissed this question" })
  expect(result.report).toContain("No answer from the person")
}, 120_000)

test("control: a client that cannot show a form is never handed a round; the question is dismissed as on 2025", async () => {
  const repo = await makeRepo(world)
  const { client } = await modern({ auto: false })
  world.model.reset()
  const result = await callRound(client, askScout(repo))
  expect(result.resultType).not.toBe("input_required")
  expect(structured(result).report).toContain("No answer from the person")
  expect(questionResult()).toMatchObject({ tool: "question", output: "The user dismissed this question" })
}, 120_000)

test("no next round within the ask's wait: the question is dismissed, the task goes on, and a late round is told so", async () => {
  const repo = await makeRepo(world)
  const { client } = await modern({ person: () => ({ action: "cancel" }), auto: false })
  world.model.reset()
  const first = await callRound(client, askScout(repo))
  expect(first.resultType).toBe("input_required")
  // The task is not held by a client that never comes back: the ask lapses after its wait. The late round comes as
  // soon as OpenCode has the dismissal, while the flow itself may still be open: its answer reaches no one all the same.
  const dismissed = async () => questionResult() !== undefined
  expect(await until(dismissed, 60_000)).toBe(true)
  expect(questionResult()).toMatchObject({ tool: "question", output: "The user dismissed this question" })
  const key = Object.keys(first.inputRequests ?? {})[0]!
  const late = await callRound(client, {
    ...askScout(repo),
    inputResponses: { [key]: { action: "accept", content: { q1: "tally" } } },
    requestState: first.requestState,
  })
  expect(late.isError).toBe(true)
  expect(JSON.stringify(late.content)).toContain("was no longer waiting for this answer")
  const id = JSON.parse(Buffer.from(first.requestState!.slice(3).split(".")[0]!, "base64url").toString()).p.task
  const finished = async () => isFinished((await delegations.read(id))?.status ?? "running")
  expect(await until(finished, 60_000)).toBe(true)
  expect((await delegations.read(id))?.status).toBe("succeeded")
}, 120_000)
