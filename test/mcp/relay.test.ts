// The permission relay on the real OpenCode with the scripted model: with config.json policy.relay
// naming question and webfetch, a delegated agent's question or fetch is put to the person through an
// MCP client that declares elicitation, and what the person answers is what the model receives. A
// decline, no answer in time, a client without elicitation or a call that already returned `running`
// refuse the ask with the reason, in progress and in what the model reads.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/client"
import { connect, makeRepo, startWorld, stopWorld, structured, type Person, type World } from "./_setup"
import { askingTurns, QUESTION } from "../helpers/question"
import { countingSite, type Site } from "../helpers/site"

let world: World
// An agent writes the question: here one of 300 KB, and 25 at once.
const BIG = `Which name should the counting function get? ${"Consider every caller first. ".repeat(10_500)}`
const yesNo = (n: number) => ({
  question: `Question ${n}: go ahead?`,
  header: `Q${n}`,
  options: [
    { label: "yes", description: "" },
    { label: "no", description: "" },
  ],
})
const askAll = (from: number, count: number) => ({
  tools: Array.from({ length: count }, (_, i) => ({ tool: "question", args: { questions: [yesNo(from + i)] } })),
})
let site: Site
const NOTES = "relay notes: the nightly build is green"

beforeAll(async () => {
  site = countingSite(NOTES)
  const { url } = site
  // The config, and the agents rendered from it, relay questions and fetches.
  world = await startWorld(
    {
      ask: {
        turns: askingTurns("No answer from the person; reporting without one."),
      },
      fetch: {
        turns: [
          { steps: [{ tool: "webfetch", args: { url, format: "text" } }, { text: "Fetched. {{lastToolOutput}}" }] },
        ],
      },
      // The rework (task_continue, the second turn) is what fetches.
      rework: {
        turns: [
          { steps: [{ text: "Looked around." }] },
          {
            steps: [
              { tool: "webfetch", args: { url, format: "text" } },
              { text: "Fetched on rework. {{lastToolOutput}}" },
            ],
          },
        ],
      },
      // The fetch comes only after the call has returned `running` (a 1 s sync budget).
      "big-ask": {
        turns: [
          {
            steps: [
              { tool: "question", args: { questions: [{ ...QUESTION, question: BIG }] } },
              { text: "Asked. {{lastToolOutput}}" },
            ],
          },
        ],
      },
      "many-asks": { turns: [{ steps: [askAll(1, 25), { text: "Asked many. {{toolOutputs}}" }] }] },
      // Six steps of four questions each: within the bound at once, over the task's total of 20.
      "ask-often": {
        turns: [{ steps: [...[0, 1, 2, 3, 4, 5].map((step) => askAll(step * 4 + 1, 4)), { text: "Asked often." }] }],
      },
      "late-fetch": {
        turns: [
          {
            steps: [
              { tool: "webfetch", args: { url, format: "text" }, delayMs: 3000 },
              { text: "Fetched late. {{lastToolOutput}}" },
            ],
          },
        ],
      },
    },
    // A question no person can be asked is dismissed at once here, as before task_respond (respond.test.ts).
    { policy: { relay: ["question", "webfetch"], respondWaitSeconds: 0 } },
  )
})

afterAll(async () => {
  await stopWorld(world)
  await site?.stop()
})

/** A person who answers from a queue and remembers what they were asked. */
function person(...answers: (ElicitResult | "silent")[]): Person & { asked: ElicitRequest["params"][] } {
  const asked: ElicitRequest["params"][] = []
  const answer: Person = (request, extra) => {
    asked.push(request.params)
    const next = answers.shift() ?? { action: "cancel" }
    if (next !== "silent") return next
    // Never answers: the server withdraws the request when its bound passes.
    return new Promise((_, reject) =>
      extra.signal.addEventListener("abort", () => reject(new Error("withdrawn")), { once: true }),
    )
  }
  return Object.assign(answer, { asked })
}

async function scout(client: Awaited<ReturnType<typeof connect>>["client"], repo: string, script: string) {
  const progress: string[] = []
  const result = await client.callTool(
    { name: "scout", arguments: { cwd: repo, task: `Find out what is needed. [script:${script}]` } },
    {
      onprogress: (note) => void progress.push(note.message ?? ""),
      timeout: 120_000,
    },
  )
  return { result: structured(result), progress }
}

/** A person who answers every question "yes" a moment later, and counts the forms open at once. */
function busyPerson() {
  const state = { asked: [] as ElicitRequest["params"][], open: 0, mostOpen: 0 }
  const answer: Person = async (request) => {
    state.asked.push(request.params)
    state.mostOpen = Math.max(state.mostOpen, ++state.open)
    await Bun.sleep(50)
    state.open--
    return { action: "accept", content: { q1: "yes" } }
  }
  return Object.assign(answer, { state })
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
      requestedSchema: {
        type: "object",
        properties: { q1: { type: "string", title: "Name", enum: ["countWords", "tally"] } },
        required: ["q1"],
      },
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
    site.hits = 0
    const accepted = await scout(client, repo, "fetch")
    expect(answering.asked[0]!.message).toBe(
      `A delegated OpenCode agent asks for webfetch ${site.url}. Accept to allow it once; decline to refuse.`,
    )
    expect(accepted.progress).toContain(`asked the person: webfetch ${site.url}`)
    expect(accepted.progress).toContain("the person answered: allowed once")
    expect(site.hits).toBe(1)
    expect(accepted.result.report).toContain(NOTES)

    site.hits = 0
    const declined = await scout(client, repo, "fetch")
    expect(answering.asked).toHaveLength(2)
    expect(site.hits).toBe(0)
    expect(declined.progress).toContain(`refused a permission request (webfetch ${site.url}): the person declined`)
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
    site.hits = 0
    const { result, progress } = await scout(client, repo, "fetch")
    expect(answering.asked).toHaveLength(1)
    expect(site.hits).toBe(0)
    expect(progress).toContain(
      `refused a permission request (webfetch ${site.url}): no answer from the person within 1s`,
    )
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
    site.hits = 0
    const { progress } = await scout(client, repo, "fetch")
    expect(site.hits).toBe(0)
    expect(progress.find((line) => line.startsWith("refused a permission request (webfetch"))).toContain(
      "no one to ask: the calling client cannot relay asks to the person (no MCP elicitation)",
    )
    expect(lastToolResult()?.output).toContain("no MCP elicitation")

    const question = await scout(client, repo, "ask")
    expect(question.progress.find((line) => line.startsWith("refused a question request"))).toContain(
      "no MCP elicitation",
    )
    // OpenCode ends the step on a dismissed question; the report is then asked for once (turn.ts).
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
    site.hits = 0
    const { result } = await scout(client, repo, "late-fetch")
    expect(result.status).toBe("running")
    const final = await delegations.follow(result.task_id!)
    expect(answering.asked).toHaveLength(0)
    expect(site.hits).toBe(0)
    expect(final?.progress.find((line) => line.startsWith("refused a permission request (webfetch"))).toContain(
      "the call had returned; no one to ask",
    )
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
    site.hits = 0
    const first = await scout(client, repo, "rework")
    expect(first.result.status).toBe("succeeded")
    expect(answering.asked).toHaveLength(0)
    const progress: string[] = []
    const rework = structured(
      await client.callTool(
        { name: "task_continue", arguments: { task_id: first.result.task_id, task: "Now fetch the notes." } },
        {
          onprogress: (note) => void progress.push(note.message ?? ""),
          timeout: 120_000,
        },
      ),
    )
    expect(answering.asked).toHaveLength(1)
    expect(progress).toContain("the person answered: allowed once")
    expect(site.hits).toBe(1)
    expect(rework.report).toContain(NOTES)
  } finally {
    await close()
  }
}, 120_000)

test("a 300 KB question reaches the person clipped to a small form that says so, and the answer goes back to the model", async () => {
  const repo = await makeRepo(world)
  const answering = person({ action: "accept", content: { q1: "countWords" } })
  const { client, close } = await connect(world, {}, "relay-tests", answering)
  try {
    world.model.reset()
    const { result, progress } = await scout(client, repo, "big-ask")
    expect(answering.asked).toHaveLength(1)
    const form = answering.asked[0]!
    expect(JSON.stringify(form).length).toBeLessThan(10_000)
    expect(form.message).toContain(`Clipped for this form: question 1: ${BIG.length} characters, the first 2000 shown`)
    expect(JSON.stringify(form)).toContain(JSON.stringify(BIG.slice(0, 2000)).slice(1, -1))
    expect(progress.find((line) => line.startsWith("asked the person: "))!.length).toBeLessThan(1_100)
    // OpenCode echoes the whole question back to the model (and truncates it), so the answer is read from progress.
    expect(progress).toContain("the person answered: countWords")
    expect(result.status).toBe("succeeded")
  } finally {
    await close()
  }
}, 120_000)

test("25 questions in one step: one form open at a time, four wait their turn, and the other 20 are refused with a reason the model reads", async () => {
  const repo = await makeRepo(world)
  const answering = busyPerson()
  const { client, close } = await connect(world, {}, "relay-tests", answering)
  try {
    world.model.reset()
    const { result } = await scout(client, repo, "many-asks")
    expect(answering.state.mostOpen).toBe(1)
    expect(answering.state.asked).toHaveLength(5)
    const outputs = world.model
      .toolResults()
      .filter((entry) => entry.tool === "question")
      .map((entry) => entry.output)
    expect(outputs).toHaveLength(25)
    expect(outputs.filter((output) => output.includes('="yes"'))).toHaveLength(5)
    const refused = outputs.filter((output) =>
      output.includes("[not put to the person: 5 asks from this task are already open or waiting"),
    )
    expect(refused).toHaveLength(20)
    expect(refused[0]).toContain("ask one thing at a time")
    expect(result.status).toBe("succeeded")
  } finally {
    await close()
  }
}, 120_000)

test("a task puts at most 20 asks to the person in its life: the 21st and later are refused with the reason, however few are open", async () => {
  const repo = await makeRepo(world)
  const answering = busyPerson()
  const { client, close } = await connect(world, {}, "relay-tests", answering)
  try {
    world.model.reset()
    const { result } = await scout(client, repo, "ask-often")
    expect(answering.state.mostOpen).toBe(1)
    expect(answering.state.asked).toHaveLength(20)
    const outputs = world.model
      .toolResults()
      .filter((entry) => entry.tool === "question")
      .map((entry) => entry.output)
    expect(outputs).toHaveLength(24)
    expect(
      outputs.filter((output) => output.includes("[not put to the person: this task has already put 20 asks")),
    ).toHaveLength(4)
    expect(result.status).toBe("succeeded")
  } finally {
    await close()
  }
}, 120_000)
