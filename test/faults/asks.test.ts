// A question pending when its relay goes away must not hold the workspace until the deadline. A worker
// (writer lock on its repository) asks a question that the compiled `serve` relays to a client that
// declares elicitation and never answers. Then the client closes, or the serve is SIGKILLed: the
// closing serve withdraws its open asks, and the watchdog taking the task over answers the ones still
// pending (question.list), each with a reason the agent reads. The lock must be free within 15 s and
// the session must have received the reason. Control: with the client connected, the person's answer
// reaches the model. Before, the task stayed `running` with its lock for the whole deadline. A question
// waiting for task_respond (a client without elicitation) is withdrawn the same way, and the record says so.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { Client, type ElicitResult } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { createHash } from "node:crypto"
import { readdir, readFile } from "node:fs/promises"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { createRepository } from "../../src/model/demo"
import type { IsolatedHome } from "../../src/model/home"
import type { ScriptedModel } from "../../src/model/server"
import { alive } from "../../src/util/process"
import { QUESTION } from "../helpers/question"
import { countingSite, type Site } from "../helpers/site"
import { BINARY } from "../helpers/mcp"
import { startHome, stopHome, type HomeWorld } from "../helpers/world"
import { until } from "../helpers/until"

let world: HomeWorld
let model: ScriptedModel
let home: IsolatedHome

let site: Site

beforeAll(async () => {
  site = countingSite("fetched notes")
  const { url } = site
  world = await startHome(
    {
      ask: {
        turns: [
          { steps: [{ tool: "question", args: { questions: [QUESTION] } }, { text: "Asked. {{lastToolOutput}}" }] },
        ],
      },
      // No timeout argument, as models write it: OpenCode 1.18.33 then cannot list the pending ask
      // (GET /permission answers 400, "metadata.timeout"), so only its id, kept in the record, answers it.
      fetch: {
        turns: [
          { steps: [{ tool: "webfetch", args: { url, format: "text" } }, { text: "Fetch done. {{lastToolOutput}}" }] },
        ],
      },
    },
    // The default deadline (600 s) stands: the test fails long before a lock held until then is freed.
    { config: { policy: { relay: ["question", "webfetch"] } } },
  )
  ;({ model, home } = world)
})

afterAll(async () => {
  await stopHome(world)
  await site?.stop()
})

/** The writer lock of `repo` (engine/capacity/locks.ts names it by a hash of the workspace), if held. */
const lockOf = (repo: string) =>
  Bun.file(`${home.paths.locksDir}/${createHash("sha256").update(repo).digest("hex").slice(0, 32)}.json`).exists()

async function recordOf(repo: string): Promise<TaskRecord | undefined> {
  const dir = home.paths.tasksDir
  for (const name of (await readdir(dir).catch(() => [] as string[])).filter((entry) => entry.endsWith(".json"))) {
    const record = JSON.parse(await readFile(`${dir}/${name}`, "utf8")) as TaskRecord
    if (record.workspace === repo) return record
  }
  return undefined
}

/** What the scripted model was given back for the `tool` call in the conversation tagged `tag`. */
const toolResult = (tag: string, tool: string) =>
  model
    .toolResults()
    .filter((result) => result.tool === tool)
    .find((result) =>
      model.requests.some(
        (request) =>
          JSON.stringify(request.body.messages).includes(tag) &&
          JSON.stringify(request.body.messages).includes(result.callId),
      ),
    )

/** A compiled serve with a client that declares elicitation; `answer` is the person (undefined: never answers). */
async function connectPerson(answer?: ElicitResult) {
  const transport = new StdioClientTransport({
    command: BINARY,
    args: ["serve"],
    env: home.env as Record<string, string>,
    stderr: "pipe",
  })
  const client = new Client({ name: "asks-tests", version: "1" }, { capabilities: { elicitation: {} } })
  let asked = 0
  client.setRequestHandler("elicitation/create", (_request, extra) => {
    asked++
    if (answer) return answer
    // Never answers: the person walked away.
    return new Promise<ElicitResult>((_, reject) =>
      extra.mcpReq.signal.addEventListener("abort", () => reject(new Error("gone")), { once: true }),
    )
  })
  await client.connect(transport)
  return { client, pid: transport.pid!, asked: () => asked }
}

async function askThenLeave(leave: "close" | "sigkill", script = "ask", tool = "question") {
  const repo = await createRepository("oc-orch-asks-", { "README.md": "# r\n" })
  world.dirs.push(repo)
  const tag = `asks-${leave}-${Date.now()}`
  const person = await connectPerson()
  const call = person.client.callTool(
    { name: "worker", arguments: { cwd: repo, task: `Ask first (${tag}). [script:${script}]` } },
    { timeout: 600_000 },
  )
  void call.catch(() => undefined)
  // The question is open and put to the person, who does not answer.
  expect(await until(() => person.asked() === 1, 60_000)).toBe(true)
  expect(await lockOf(repo)).toBe(true)
  // Put to the person only once the record keeps it: what a process taking the task over answers it by.
  expect((await recordOf(repo))?.asks).toEqual([
    expect.objectContaining({ kind: tool === "question" ? "question" : "permission" }),
  ])
  if (leave === "sigkill") process.kill(person.pid, "SIGKILL")
  await person.client.close().catch(() => undefined)
  expect(await until(() => !alive(person.pid), 10_000)).toBe(true)
  // Deadlines, not timings: after a SIGKILL the watchdog takes the task over and ends it, which on a loaded
  // machine took longer than 15 s.
  expect(await until(async () => !(await lockOf(repo)), 60_000)).toBe(true)
  expect(await until(async () => (await recordOf(repo))?.status !== "running", 30_000)).toBe(true)
  return { record: (await recordOf(repo))!, told: toolResult(tag, tool)?.output ?? "" }
}

test("control: with the client connected, the question is relayed and the person's answer reaches the model", async () => {
  const repo = await createRepository("oc-orch-asks-", { "README.md": "# r\n" })
  world.dirs.push(repo)
  const person = await connectPerson({ action: "accept", content: { q1: "countWords" } })
  try {
    await person.client.callTool(
      { name: "worker", arguments: { cwd: repo, task: "Ask first (asks-control). [script:ask]" } },
      { timeout: 120_000 },
    )
    expect(await until(async () => (await recordOf(repo))?.status !== "running", 60_000)).toBe(true)
    expect(person.asked()).toBe(1)
    const record = (await recordOf(repo))!
    expect(record.status).toBe("succeeded")
    expect(record.result?.report).toContain(`"${QUESTION.question}"="countWords"`)
    expect(await lockOf(repo)).toBe(false)
  } finally {
    await person.client.close()
  }
}, 120_000)

test("attack: the client closes while its question is open: the serve withdraws it, the lock is free within 15 s", async () => {
  const { record, told } = await askThenLeave("close")
  expect(told).toContain("No one can answer this: the MCP client that could put it to the person closed")
  expect(record.status).toBe("succeeded")
  expect(record.result?.report).toContain("No one can answer this")
}, 120_000)

test("attack: the serve is SIGKILLed while its question is open: the watchdog answers it by policy, the lock is free within 15 s", async () => {
  const { record, told } = await askThenLeave("sigkill")
  expect(told).toContain("No one can answer this: the MCP server process that could put it to the person stopped")
  expect(record.status).toBe("succeeded")
  expect(record.progress.some((line) => line.startsWith("withdrew a question"))).toBe(true)
}, 120_000)

for (const leave of ["close", "sigkill"] as const)
  test(`attack: ${leave === "close" ? "the client closes" : "the serve is SIGKILLed"} while a relayed fetch waits for permission: refused with the reason, nothing fetched`, async () => {
    site.hits = 0
    const { record, told } = await askThenLeave(leave, "fetch", "webfetch")
    expect(told).toContain(
      leave === "close"
        ? "Refused: the MCP client that could put it to the person closed"
        : "Refused: the MCP server process that could put it to the person stopped",
    )
    expect(site.hits).toBe(0)
    expect(record.status).toBe("succeeded")
    expect(record.progress.some((line) => line.startsWith("withdrew a permission request (webfetch"))).toBe(true)
  }, 120_000)

test("attack: the serve is SIGKILLed while a question waits for task_respond: withdrawn, and said so", async () => {
  const repo = await createRepository("oc-orch-asks-", { "README.md": "# r\n" })
  world.dirs.push(repo)
  const tag = `asks-respond-${Date.now()}`
  // A client without elicitation (as `codex exec`): the question waits for the parent in the record.
  const transport = new StdioClientTransport({
    command: BINARY,
    args: ["serve"],
    env: home.env as Record<string, string>,
    stderr: "pipe",
  })
  const client = new Client({ name: "asks-tests", version: "1" })
  await client.connect(transport)
  const pid = transport.pid!
  const call = client.callTool(
    { name: "worker", arguments: { cwd: repo, task: `Ask first (${tag}). [script:ask]` } },
    { timeout: 600_000 },
  )
  void call.catch(() => undefined)
  expect(await until(async () => (await recordOf(repo))?.waiting !== undefined, 60_000)).toBe(true)
  process.kill(pid, "SIGKILL")
  await client.close().catch(() => undefined)
  expect(await until(() => !alive(pid), 10_000)).toBe(true)
  // Deadlines, not timings: after a SIGKILL the watchdog takes the task over and ends it, which on a loaded
  // machine took longer than 15 s.
  expect(await until(async () => !(await lockOf(repo)), 60_000)).toBe(true)
  expect(await until(async () => (await recordOf(repo))?.status !== "running", 30_000)).toBe(true)
  const record = (await recordOf(repo))!
  expect(record.waiting).toBeUndefined()
  expect(record.progress).toContain(
    "the question that waited for task_respond was withdrawn: its MCP server process stopped",
  )
  expect(toolResult(tag, "question")?.output).toContain(
    "No one can answer this: the MCP server process that could put it to the person stopped",
  )
  expect(record.status).toBe("succeeded")
}, 120_000)
