// The permission relay on the real OpenCode with the scripted model: with config.json policy.relay
// naming question and webfetch, a delegated agent's question or fetch is put to the person through an
// MCP client that declares elicitation, and what the person answers is what the model receives. A
// decline, no answer in time, a client without elicitation or a call that already returned `running`
// refuse the ask with the reason, in progress and in what the model reads.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { connect, makeRepo, startWorld, stopWorld, structured, type Person, type World } from "./_setup"
import { askingTurns, QUESTION } from "../helpers/question"

let world: World
let site: ReturnType<typeof Bun.serve>
let hits = 0
const NOTES = "relay notes: the nightly build is green"

beforeAll(async () => {
  // A site on the loopback interface: webfetch needs no internet.
  site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => {
      hits++
      return new Response(NOTES, { headers: { "content-type": "text/plain" } })
    },
  })
  const url = `http://127.0.0.1:${site.port}/notes`
  // The config, and the agents rendered from it, relay questions and fetches.
  world = await startWorld(
    {
      ask: {
        turns: askingTurns("No answer from the person; reporting without one."),
      },
      fetch: { turns: [{ steps: [{ tool: "webfetch", args: { url, format: "text" } }, { text: "Fetched. {{lastToolOutput}}" }] }] },
      // The rework (task_continue, the second turn) is what fetches.
      rework: { turns: [{ steps: [{ text: "Looked around." }] }, { steps: [{ tool: "webfetch", args: { url, format: "text" } }, { text: "Fetched on rework. {{lastToolOutput}}" }] }] },
      // The fetch comes only after the call has returned `running` (a 1 s sync budget).
      "late-fetch": { turns: [{ steps: [{ tool: "webfetch", args: { url, format: "text" }, delayMs: 3000 }, { text: "Fetched late. {{lastToolOutput}}" }] }] },
    },
    { policy: { relay: ["question", "webfetch"] } },
  )
})

afterAll(async () => {
  await stopWorld(world)
  await site?.stop(true)
})

/** A person who answers from a queue and remembers what they were asked. */
function person(...answers: (ElicitResult | "silent")[]): Person & { asked: ElicitRequest["params"][] } {
  const asked: ElicitRequest["params"][] = []
  const answer: Person = (request, extra) => {
    asked.push(request.params)
    const next = answers.shift() ?? { action: "cancel" }
    if (next !== "silent") return next
    // Never answers: the server withdraws the request when its bound passes.
    return new Promise((_, reject) => extra.signal.addEventListener("abort", () => reject(new Error("withdrawn")), { once: true }))
  }
  return Object.assign(answer, { asked })
}

async function scout(client: Awaited<ReturnType<typeof connect>>["client"], repo: string, script: string) {
  const progress: string[] = []
  const result = await client.callTool({ name: "scout", arguments: { cwd: repo, task: `Find out what is needed. [script:${script}]` } }, undefined, {
    onprogress: (note) => void progress.push(note.message ?? ""),
    timeout: 120_000,
  })
  return { result: structured(result), progress }
}

/** What the scripted model was given back for its last tool call. */
const lastToolResult = () => world.model.toolResults().at(-1)

test("a question is put to the person as a choice of its options, and the model receives the answer", async () => {
  const repo = await makeRepo(world)
  const answering = person({ action: "accept", content: { q1: "countWords" } })
  const { client, close } = await connect(world, {}, "relay-tests", answering)
  try {
    world.model.reset()
    const { result, progress } = await scout(client, repo, "ask")
    expect(answering.asked).toHaveLength(1)
    expect(answering.asked[0]).toMatchObject({
      message: `A delegated OpenCode agent asks: ${QUESTION.question}`,
      requestedSchema: { type: "object", properties: { q1: { type: "string", title: "Name", enum: ["countWords", "tally"] } }, required: ["q1"] },
    })
    expect(progress).toContain(`asked the person: ${QUESTION.question}`)
    expect(progress).toContain("the person answered: countWords")
    expect(result.status).toBe("succeeded")
    expect(result.report).toContain(`"${QUESTION.question}"="countWords"`)
    // Offered to the model because policy.relay names it.
    expect(world.model.stepRequests()[0]!.body.tools?.map((tool) => tool.function.name)).toContain("question")
  } finally {
    await close()
  }
}, 120_000)

test("a fetch the person accepts runs once; one they decline is refused with the reason, and nothing is fetched", async () => {
  const repo = await makeRepo(world)
  const answering = person({ action: "accept" }, { action: "decline" })
  const { client, close } = await connect(world, {}, "relay-tests", answering)
  try {
    hits = 0
    const accepted = await scout(client, repo, "fetch")
    expect(answering.asked[0]!.message).toBe(`A delegated OpenCode agent asks for webfetch http://127.0.0.1:${site.port}/notes. Accept to allow it once; decline to refuse.`)
    expect(accepted.progress).toContain(`asked the person: webfetch http://127.0.0.1:${site.port}/notes`)
    expect(accepted.progress).toContain("the person answered: allowed once")
    expect(hits).toBe(1)
    expect(accepted.result.report).toContain(NOTES)

    hits = 0
    const declined = await scout(client, repo, "fetch")
    expect(answering.asked).toHaveLength(2)
    expect(hits).toBe(0)
    expect(declined.progress).toContain(`refused a permission request (webfetch http://127.0.0.1:${site.port}/notes): the person declined`)
    expect(lastToolResult()?.output).toContain("refused by policy (the person declined)")
    expect(declined.result.report).not.toContain(NOTES)
  } finally {
    await close()
  }
}, 120_000)

test("no answer within the bound: the ask is withdrawn and refused, saying so", async () => {
  const repo = await makeRepo(world)
  const answering = person("silent")
  const { client, close } = await connect(world, { relayWaitMs: 1000 }, "relay-tests", answering)
  try {
    hits = 0
    const { result, progress } = await scout(client, repo, "fetch")
    expect(answering.asked).toHaveLength(1)
    expect(hits).toBe(0)
    expect(progress).toContain(`refused a permission request (webfetch http://127.0.0.1:${site.port}/notes): no answer from the person within 1s`)
    expect(lastToolResult()?.output).toContain("no answer from the person within 1s")
    expect(result.status).toBe("succeeded")
  } finally {
    await close()
  }
}, 120_000)

test("a client without elicitation: the ask is refused by policy as before, the reason in progress and in what the model reads", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    hits = 0
    const { progress } = await scout(client, repo, "fetch")
    expect(hits).toBe(0)
    expect(progress.find((line) => line.startsWith("refused a permission request (webfetch"))).toContain("no one to ask: the calling client cannot relay asks to the person (no MCP elicitation)")
    expect(lastToolResult()?.output).toContain("no MCP elicitation")

    const question = await scout(client, repo, "ask")
    expect(question.progress.find((line) => line.startsWith("refused a question request"))).toContain("no MCP elicitation")
    // OpenCode ends the step on a dismissed question; the report is then asked for once (delegate.ts).
    expect(lastToolResult()).toMatchObject({ tool: "question", output: "The user dismissed this question" })
    expect(question.result.report).toBe("No answer from the person; reporting without one.")
  } finally {
    await close()
  }
}, 120_000)

test("an ask raised after the call returned `running` is refused: the call had returned, no one to ask", async () => {
  const repo = await makeRepo(world)
  const answering = person({ action: "accept" })
  const { client, delegations, close } = await connect(world, { syncBudgetMs: 1000 }, "relay-tests", answering)
  try {
    hits = 0
    const { result } = await scout(client, repo, "late-fetch")
    expect(result.status).toBe("running")
    const final = await delegations.follow(result.task_id!)
    expect(answering.asked).toHaveLength(0)
    expect(hits).toBe(0)
    expect(final?.progress.find((line) => line.startsWith("refused a permission request (webfetch"))).toContain("the call had returned; no one to ask")
    expect(final?.result?.report).toContain("the call had returned")
  } finally {
    await close()
  }
}, 120_000)

test("task_continue relays too: the rework's fetch is asked for and, accepted, runs", async () => {
  const repo = await makeRepo(world)
  const answering = person({ action: "accept" })
  const { client, close } = await connect(world, {}, "relay-tests", answering)
  try {
    hits = 0
    const first = await scout(client, repo, "rework")
    expect(first.result.status).toBe("succeeded")
    expect(answering.asked).toHaveLength(0)
    const progress: string[] = []
    const rework = structured(
      await client.callTool({ name: "task_continue", arguments: { task_id: first.result.task_id, task: "Now fetch the notes." } }, undefined, {
        onprogress: (note) => void progress.push(note.message ?? ""),
        timeout: 120_000,
      }),
    )
    expect(answering.asked).toHaveLength(1)
    expect(progress).toContain("the person answered: allowed once")
    expect(hits).toBe(1)
    expect(rework.report).toContain(NOTES)
  } finally {
    await close()
  }
}, 120_000)
