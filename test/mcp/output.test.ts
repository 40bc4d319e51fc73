// session_output on the real OpenCode: a finished scout's kept conversation read by task id and by
// session id, as the last answer, the latest events and the paged transcript.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { readdir } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { resolvePaths } from "../../src/config/paths"
import { stopServer } from "../../src/opencode/server"
import { BINARY } from "../helpers/mcp"
import { tempDir } from "../helpers/temp"
import { connect, makeRepo, startWorld, stopWorld, structured, text, type Connected, type World } from "./_setup"
import { callScout, scoutAnswer } from "./_scout"

// 50 KB: what a scout that pasted whole files into its answer would hand the parent uncut.
const LONG_REPORT = `FIRST LINE\n${"0123456789abcdef\n".repeat(2940)}CONCLUSION: count is in src/tally.ts`

let world: World
let mcp: Connected

beforeAll(async () => {
  world = await startWorld({
    look: {
      turns: [
        {
          steps: [
            { tool: "read", args: { filePath: "src/tally.ts" } },
            { tool: "grep", args: { pattern: "count" } },
            { text: "count is in src/tally.ts: {{lastToolOutput}}" },
          ],
        },
      ],
    },
    long: { turns: [{ steps: [{ text: LONG_REPORT }] }] },
  })
  mcp = await connect(world)
}, 60_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

type Output = {
  session_id: string
  answer?: string
  entries?: { index: number; kind: string; tool?: string; text: string }[]
  total?: number
  next_cursor?: string
}
const output = async (args: Record<string, unknown>) =>
  structured(await mcp.client.callTool({ name: "session_output", arguments: args })) as unknown as Output

/** A finished scout in `repo`, asked where `count` is; it must have succeeded. */
async function lookedAround(repo: string) {
  const scout = await scoutAnswer(mcp.client, { cwd: repo, task: "[script:look] where is count?" }, 120_000)
  expect(scout.status).toBe("succeeded")
  return scout
}

test("a finished scout's conversation: the answer, the latest events, and every entry through the pages", async () => {
  const repo = await makeRepo(world)
  const scout = await lookedAround(repo)

  const answer = await output({ task_id: scout.task_id })
  expect(answer.answer).toBe(String(scout.report))

  const events = await output({ task_id: scout.task_id, view: "events", last: 2 })
  expect(events.entries?.map((entry) => entry.kind)).toEqual(["tool", "text"])
  expect(events.entries?.[0]).toMatchObject({ tool: "grep" })

  const seen: number[] = []
  let cursor: string | undefined
  do {
    const current = await output({
      task_id: scout.task_id,
      view: "transcript",
      page_size: 2,
      ...(cursor && { cursor }),
    })
    seen.push(...(current.entries ?? []).map((entry) => entry.index))
    cursor = current.next_cursor
  } while (cursor)
  // The brief, the read, the grep, the report.
  expect(seen).toEqual([0, 1, 2, 3])

  // By session id alone: OpenCode is asked for its directory.
  const bySession = await output({ session_id: answer.session_id, view: "transcript" })
  expect(bySession.entries?.[1]).toMatchObject({ kind: "tool", tool: "read" })
  expect(bySession.entries?.[1]?.text).toContain("src/tally.ts")
}, 120_000)

test("an unknown session or both ids are refused with what to do", async () => {
  const unknown = await mcp.client.callTool({ name: "session_output", arguments: { session_id: "ses_doesnotexist" } })
  expect(unknown.isError).toBe(true)
  expect(text(unknown)).toContain("OpenCode has no session ses_doesnotexist")
  const both = await mcp.client.callTool({
    name: "session_output",
    arguments: { session_id: "ses_x", task_id: "task_x" },
  })
  expect(text(both)).toContain("Pass either task_id or session_id.")
}, 30_000)

test("a 50 KB report reaches the parent as at most 2 KB with its head and tail; session_output has it whole", async () => {
  const repo = await makeRepo(world)
  const result = await callScout(mcp.client, { cwd: repo, task: "[script:long] where is count?" }, 120_000)
  const scout = structured(result)
  expect(scout.status).toBe("succeeded")
  expect(Buffer.byteLength(LONG_REPORT)).toBeGreaterThan(50_000)
  expect(Buffer.byteLength(text(result))).toBeLessThanOrEqual(2048)
  const report = String(scout.report)
  expect(report.startsWith("FIRST LINE")).toBe(true)
  expect(report.endsWith("CONCLUSION: count is in src/tally.ts")).toBe(true)
  expect(report).toContain(`read it whole with session_output with task_id "${scout.task_id}"`)
  // The structured fields are whole, and the ledger counts what the parent's model receives: the
  // structured content (both clients pass it instead of the text block), far more than the 2 KB text.
  expect(
    [scout.task_id, scout.session_id, scout.workspace].every((field) => typeof field === "string" && field.length > 0),
  ).toBe(true)
  const returned = (scout.bytes as { returned: number }).returned
  expect(returned).toBe(Buffer.byteLength(JSON.stringify(result.structuredContent)))
  expect(returned).toBeGreaterThan(Buffer.byteLength(text(result)))

  const whole = await output({ task_id: scout.task_id })
  expect(whole.answer).toBe(LONG_REPORT)
}, 120_000)

type Row = {
  session_id: string
  title: string
  directory: string
  state: string
  age_s: number
  task_id?: string
  tokens_in: number
  tokens_out: number
  last_tool?: string
  model?: string
}
const sessions = async (args: Record<string, unknown> = {}) =>
  structured(await mcp.client.callTool({ name: "sessions", arguments: args })) as unknown as {
    sessions: Row[]
    total: number
  }

test("sessions lists ours with their task and a session started outside the product, across directories", async () => {
  const repo = await makeRepo(world)
  const elsewhere = await makeRepo(world)
  const scout = await lookedAround(repo)
  // A person's session, on the same shared server, in another directory.
  const { client } = await mcp.runtime.opencode()
  const outside = (await client.session.create({ directory: elsewhere, title: "a person's own session" })).data!.id

  const all = await sessions()
  const mine = all.sessions.find((row) => row.session_id === scout.session_id)
  expect(mine).toMatchObject({
    directory: repo,
    state: "idle",
    task_id: String(scout.task_id),
    last_tool: "grep count",
    model: "scripted/fast",
  })
  // The session's own totals, as the task's record summed them from its messages.
  const spent = (await mcp.delegations.read(String(scout.task_id)))!.result!.tokens
  expect(mine!.tokens_in).toBe(spent.input + spent.cacheRead + spent.cacheWrite)
  expect(mine!.tokens_out).toBe(spent.output + spent.reasoning)
  expect(mine!.tokens_in).toBeGreaterThan(0)
  expect(all.sessions.find((row) => row.session_id === outside)).toMatchObject({
    title: "a person's own session",
    directory: elsewhere,
    state: "idle",
  })
  expect(all.sessions.find((row) => row.session_id === outside)?.task_id).toBeUndefined()

  expect((await sessions({ scope: "ours" })).sessions.map((row) => row.session_id)).not.toContain(outside)
  expect((await sessions({ directory: elsewhere })).sessions.map((row) => row.session_id)).toEqual([outside])
  expect((await sessions({ state: "busy", directory: elsewhere })).sessions).toEqual([])
  // since: active in the last hour lists both; nothing is active after a future date.
  expect((await sessions({ since: "1h" })).sessions.map((row) => row.session_id)).toEqual(
    expect.arrayContaining([scout.session_id, outside]),
  )
  expect((await sessions({ since: "2099-01-01" })).total).toBe(0)

  // The CLI reads the same list from the running server, never starting one.
  const cli = Bun.spawnSync([BINARY, "sessions", "--json", "--directory", elsewhere], { env: world.home.env })
  expect(cli.exitCode).toBe(0)
  expect(JSON.parse(cli.stdout.toString()).sessions.map((row: Row) => row.session_id)).toEqual([outside])
  // Control: with no server recorded (another state dir) it says so, and starts none.
  {
    await using stateless = await tempDir("oc-orch-nostate-")
    const none = Bun.spawnSync([BINARY, "sessions"], { env: { ...world.home.env, XDG_STATE_HOME: stateless.path } })
    expect(none.exitCode).toBe(0)
    expect(none.stdout.toString()).toContain("The shared OpenCode server is not running")
    expect(await readdir(stateless.path, { recursive: true })).not.toContain("opencode-mcp-orchestrator/server.json")
  }
  const bad = Bun.spawnSync([BINARY, "sessions", "--state", "sleepy"], { env: world.home.env })
  expect(bad.exitCode).toBe(2)
  expect(bad.stderr.toString()).toContain("--state must be busy, idle or stale")
}, 120_000)

test("the sessions tool lists by the CLI's rule: with no server running it says so and starts none", async () => {
  await using stateless = await tempDir("oc-orch-nostate-")
  const quiet = await connect(world, readFlags({ ...world.home.env, XDG_STATE_HOME: stateless.path }))
  const recorded = async () =>
    (await readdir(stateless.path, { recursive: true })).includes("opencode-mcp-orchestrator/server.json")
  try {
    const result = await quiet.client.callTool({ name: "sessions", arguments: {} })
    expect(text(result)).toContain("The shared OpenCode server is not running")
    expect(structured(result)).toMatchObject({ sessions: [], total: 0 })
    expect(await recorded()).toBe(false)
    // Control: what the tool did before, asking the runtime for OpenCode, starts and records a server.
    await quiet.runtime.opencode()
    expect(await recorded()).toBe(true)
  } finally {
    await quiet.close()
    await stopServer(resolvePaths(readFlags({ ...world.home.env, XDG_STATE_HOME: stateless.path })))
  }
}, 120_000)
