// A task's spending is summed over every session it used, in its result, in `stats` and in its caps,
// on the real OpenCode with the scripted model: a scout rerun after its server was SIGKILLed, a scout
// run again in a fresh session after OpenCode gave up on a 429, a task_continue turn, and a task taken
// over by the watchdog after its `serve` was SIGKILLed (the cap counts what was spent before), and a
// continued turn taken over while it runs or after it finished with nobody following it. The
// oracle is the scripted model's own bill (the usage it sent for each answer it finished), per session;
// control: a single-session task's totals equal OpenCode's own totals for that session and that bill.
import { afterAll, expect, test } from "bun:test"
import { writeJson } from "../../src/util/fs"
import { alive } from "../../src/util/process"
import { connectStdio, ROOT } from "../helpers/mcp"
import { battery, connect, makeRepo, structured, text, type Structured } from "../mcp/_battery"

const servers: number[] = []
// Registered before the battery's, so it runs first: the serves and watchdogs go before the world does.
afterAll(() => {
  for (const pid of servers) if (alive(pid)) process.kill(pid, "SIGKILL")
})

const read = (filePath: string, delayMs?: number) => ({ tool: "read", args: { filePath }, ...(delayMs && { delayMs }) })
const { world, mcp, call, recordOf, withConfig } = battery({
  plain: { turns: [{ steps: [read("README.md"), { text: "plain report" }] }] },
  slow_spend: {
    turns: [{ steps: [read("README.md"), read("src/tally.ts"), { text: "after the loss", delayMs: 5000 }] }],
  },
  // An empty answer gets the nudge; the nudge is rate limited until OpenCode gives up, so nothing was produced.
  empty_429: {
    turns: [
      { steps: [{ text: "", reasoning: "thinking it over" }] },
      {
        steps: [
          { text: "report after the retry", fail: { kind: "429", times: 7, per: "server", retryAfterSeconds: 1 } },
        ],
      },
    ],
  },
  two_turns: {
    turns: [
      { steps: [read("README.md"), { text: "first turn" }] },
      { steps: [read("src/tally.ts"), { text: "second turn" }] },
    ],
  },
  slow_second: {
    turns: [
      { steps: [read("README.md"), { text: "first turn" }] },
      { steps: [read("src/tally.ts"), { text: "second turn", delayMs: 4000 }] },
    ],
  },
  long_spend: {
    turns: [
      { steps: [...Array.from({ length: 12 }, () => read("src/tally.ts", 700)), { text: "read it twelve times" }] },
    ],
  },
})

interface Bill {
  input: number
  output: number
}
/** What the model billed for the answers it finished in these sessions (title requests are not the task's). */
function billOf(sessions: string[]): Bill {
  const bill = { input: 0, output: 0 }
  for (const request of world.model.requests)
    if (request.play.kind !== "title" && request.sessionId && sessions.includes(request.sessionId) && request.billed) {
      bill.input += request.billed.prompt_tokens
      bill.output += request.billed.completion_tokens
    }
  return bill
}
const billed = (bill: Bill) => bill.input + bill.output

type Tokens = { input: number; output: number; reasoning: number; cache_read: number; cache_write: number }
const tokensOf = (result: Structured) => result.tokens as Tokens
const sumOf = (tokens: Tokens) =>
  tokens.input + tokens.output + tokens.reasoning + tokens.cache_read + tokens.cache_write

async function stats() {
  type SetAside = { path: string; reason: string }
  return structured(await mcp.client.callTool({ name: "stats", arguments: {} })) as unknown as {
    total: { tasks: number; tokens: Tokens; cost: number }
    set_aside?: SetAside[]
  }
}

const withCap = (cap: number, work: () => Promise<void>) => withConfig({ maxTokensPerTask: cap }, work)

test("control: a single-session scout's tokens and cost are OpenCode's own totals for its session, and the model's bill", async () => {
  const repo = await makeRepo(world)
  const result = await call("scout", { cwd: repo, task: "[script:plain] look" })
  expect(result.status).toBe("succeeded")
  const record = await recordOf(result.task_id)
  // The parked copy holds the conversation as OpenCode recorded it.
  const { client } = await mcp.runtime.opencode()
  const messages = (await client.session.messages({ sessionID: record.sessionID!, directory: record.workspace })).data!
  const own = { input: 0, output: 0, cost: 0 }
  for (const { info } of messages)
    if (info.role === "assistant") {
      own.input += info.tokens.input + info.tokens.cache.read + info.tokens.cache.write
      own.output += info.tokens.output + info.tokens.reasoning
      own.cost += info.cost
    }
  const tokens = tokensOf(result)
  expect(own.input).toBeGreaterThan(0)
  expect({
    input: tokens.input + tokens.cache_read + tokens.cache_write,
    output: tokens.output + tokens.reasoning,
  }).toEqual({ input: own.input, output: own.output })
  expect(result.cost).toBeCloseTo(own.cost)
  expect({ input: tokens.input, output: tokens.output }).toEqual(billOf(record.sessions))
}, 60_000)

/** Kills the shared server this connection works on. */
async function killServer() {
  const { record } = await mcp.runtime.opencode()
  process.kill(record.pid, "SIGKILL")
  return record.pid
}

test("a scout rerun after its server was SIGKILLed reports both sessions' spending, in its result and in stats", async () => {
  const repo = await makeRepo(world)
  const before = await stats()
  const running = mcp.client.callTool(
    { name: "scout", arguments: { cwd: repo, task: "[script:slow_spend] look" } },
    { timeout: 120_000 },
  )
  // Killed while the first session waits on its third answer: two steps are spent and counted.
  const deadline = Date.now() + 30_000
  const slow = () =>
    world.model.requests.filter((r) => r.play.kind === "step" && r.play.script === "slow_spend" && r.play.step === 2)
  while (slow().length === 0 && Date.now() < deadline) await Bun.sleep(50)
  const first = slow()[0]!.sessionId!
  await Bun.sleep(300)
  servers.push(await killServer())
  let result = structured(await running)
  for (let i = 0; i < 10 && result.status === "running"; i++)
    result = structured(
      await mcp.client.callTool({ name: "task_status", arguments: { task_id: result.task_id, wait_seconds: 20 } }),
    )
  servers.push((await mcp.runtime.opencode()).record.pid)
  expect(result.status).toBe("succeeded")
  const record = await recordOf(result.task_id)
  expect(record.sessions[0]).toBe(first)
  const lost = billOf([first])
  const rerun = billOf(record.sessions.slice(1))
  expect(billed(lost)).toBeGreaterThan(0)
  expect(billed(rerun)).toBeGreaterThan(0)
  // The sum of both sessions, not the last transcript's alone (what the result said before).
  expect({ input: tokensOf(result).input, output: tokensOf(result).output }).toEqual({
    input: lost.input + rerun.input,
    output: lost.output + rerun.output,
  })
  const after = await stats()
  expect(after.total.tasks).toBe(before.total.tasks + 1)
  expect(after.total.tokens.input - before.total.tokens.input).toBe(lost.input + rerun.input)
}, 120_000)

test("a scout run again in a fresh session after OpenCode gave up on a 429 reports both sessions' spending", async () => {
  const repo = await makeRepo(world)
  const result = await call("scout", { cwd: repo, task: "[script:empty_429] look" })
  expect(result.status).toBe("succeeded")
  expect(result.report).toBe("report after the retry")
  const record = await recordOf(result.task_id)
  expect(record.progress.some((line) => line.startsWith("rate_limit: running the task again in a new session"))).toBe(
    true,
  )
  const sessions = record.sessions.filter((id) => billed(billOf([id])) > 0)
  expect(sessions.length).toBe(2)
  const bill = billOf(record.sessions)
  expect(billed(billOf([sessions[0]!]))).toBeGreaterThan(0)
  expect({ input: tokensOf(result).input, output: tokensOf(result).output }).toEqual(bill)
  expect(sumOf(tokensOf(result))).toBeGreaterThan(billed(billOf([sessions[1]!])))
}, 180_000)

test("a task_continue turn adds to the task's total; a task already past its cap is refused another turn", async () => {
  const repo = await makeRepo(world)
  const first = await call("worker", { cwd: repo, task: "[script:two_turns] look" })
  expect(first.status).toBe("succeeded")
  const firstTotal = sumOf(tokensOf(first))
  const second = await call("task_continue", { task_id: first.task_id, task: "and the source too" })
  expect(second.status).toBe("succeeded")
  expect(second.report).toBe("second turn")
  const record = await recordOf(first.task_id)
  const bill = billOf(record.sessions)
  expect({ input: tokensOf(second).input, output: tokensOf(second).output }).toEqual(bill)
  expect(sumOf(tokensOf(second))).toBeGreaterThan(firstTotal)
  // The cap counts the whole task: below what it already spent, a further turn would stop at once.
  await withCap(Math.max(1000, firstTotal - 1), async () => {
    const refused = await mcp.client.callTool({
      name: "task_continue",
      arguments: { task_id: first.task_id, task: "once more" },
    })
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain("past its cap of")
    expect(text(refused)).toContain("next:")
  })
  // Control: under a cap it has not reached, the same task takes a turn.
  await withCap(sumOf(tokensOf(second)) * 10, async () => {
    const again = await call("task_continue", { task_id: first.task_id, task: "once more" })
    expect(again.status).not.toBe("running")
    expect(sumOf(tokensOf(again))).toBeGreaterThan(sumOf(tokensOf(second)))
  })
}, 180_000)

test("a record whose running total is garbage is set aside and reported; stats and task_list answer for the others", async () => {
  const before = await stats()
  const records = (await mcp.delegations.list()).filter((record) => record.result)
  const good = records[0]!
  const shapes = [
    { spent: { tokens: { input: "lots", output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 } },
    { spent: { tokens: { input: -5, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }, cost: 0 } },
    { spent: { tokens: good.spending!.spent.tokens, cost: null } },
    { spent: good.spending!.spent, open: { sessionID: "", steps: "all" } },
    [],
  ]
  const ids = shapes.map((_, i) => `task_aaaaaaaa_0000000${i}`)
  for (const [i, spending] of shapes.entries())
    await writeJson(`${world.home.paths.tasksDir}/${ids[i]}.json`, { ...good, id: ids[i], spending })
  // Control: the same record with its own total is counted.
  const control = "task_aaaaaaaa_00000009"
  await writeJson(`${world.home.paths.tasksDir}/${control}.json`, { ...good, id: control })
  const after = await stats()
  expect(after.total.tasks).toBe(before.total.tasks + 1)
  expect(after.total.tokens.input).toBe(before.total.tokens.input + good.result!.tokens.input)
  const listed = structured(await mcp.client.callTool({ name: "task_list", arguments: {} }))
  expect((listed.tasks as { task_id: string }[]).map((t) => t.task_id)).toContain(control)
  // Each set-aside file is named once, by whichever listing meets it first: here stats, before task_list.
  const corrupt = [...(after.set_aside ?? []), ...((listed.corrupt_files ?? []) as { path: string; reason: string }[])]
  for (const id of ids) expect(corrupt.find((c) => c.path.endsWith(`${id}.json`))?.reason).toContain("spending")
}, 30_000)

/** The watchdogs `serve` started for itself (`supervise --parent PID`): stopped at the end if still there. */
async function watchdogsOf(parent: number): Promise<number[]> {
  const { readdir } = await import("node:fs/promises")
  const pids: number[] = []
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue
    const argv = await Bun.file(`/proc/${name}/cmdline`)
      .text()
      .then((raw) => raw.split("\0"))
      .catch(() => [] as string[])
    const at = argv.indexOf("--parent")
    if (argv.includes("supervise") && at >= 0 && argv[at + 1] === String(parent)) pids.push(Number(name))
  }
  return pids
}

/** A `serve` run from the source whose calls answer `running` after 1 s; stopped at the end if still there. */
async function serveFromSource() {
  const serve = await connectStdio({ ...world.home.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" }, [
    process.execPath,
    `${ROOT}/src/cli/main.ts`,
    "serve",
  ])
  servers.push(serve.pid)
  return serve
}

/** Closes a serve; the watchdogs it started are stopped at the end. */
async function closeServe(serve: Awaited<ReturnType<typeof connectStdio>>) {
  await serve.close().catch(() => undefined)
  for (const pid of await watchdogsOf(serve.pid)) servers.push(pid)
}

/** The task's record once it no longer says `running`, or after a minute of polling. */
async function settledRecord(id: unknown) {
  let record = await recordOf(id)
  for (let i = 0; i < 600 && record.status === "running"; i++) {
    await Bun.sleep(100)
    record = await recordOf(id)
  }
  return record
}

test("a capped scout taken over by the watchdog after its serve was SIGKILLed counts what was spent before, and stops at the cap", async () => {
  const repo = await makeRepo(world)
  // Control: uncapped, the same scout runs all thirteen steps.
  const uncapped = await call("scout", { cwd: repo, task: "[script:long_spend] read it" })
  expect(uncapped.status).toBe("succeeded")
  const whole = sumOf(tokensOf(uncapped))
  const uncappedRecord = await recordOf(uncapped.task_id)
  expect(
    world.model.requests.filter((r) => r.play.kind !== "title" && r.sessionId === uncappedRecord.sessions[0]).length,
  ).toBe(13)
  const cap = Math.floor(whole * 0.7)
  await withCap(cap, async () => {
    const serve = await serveFromSource()
    try {
      const started = structured(
        await serve.client.callTool({ name: "scout", arguments: { cwd: repo, task: "[script:long_spend] read it" } }),
      )
      expect(started.status).toBe("running")
      const id = started.task_id
      let session: string | undefined
      const deadline = Date.now() + 60_000
      // Killed once about half the cap's worth is spent: what is left of the run alone stays under the cap.
      while (Date.now() < deadline) {
        session ??= (await recordOf(id)).sessions[0]
        if (session && billed(billOf([session])) >= whole * 0.4) break
        await Bun.sleep(50)
      }
      process.kill(serve.pid, "SIGKILL")
      const atKill = billed(billOf([session!]))
      expect(atKill).toBeLessThan(cap)
      expect(whole - atKill).toBeLessThan(cap)
      const requestsAtKill = world.model.requests.filter((r) => r.sessionId === session).length
      const record = await settledRecord(id)
      expect(record.status).toBe("failed")
      expect(record.result?.errorKind).toBe("budget")
      expect(record.progress.some((line) => line.startsWith("stopped: the task used"))).toBe(true)
      // Followed after the kill (the takeover counted on), and stopped before the end.
      const requests = world.model.requests.filter((r) => r.play.kind !== "title" && r.sessionId === session).length
      expect(requests).toBeGreaterThan(requestsAtKill)
      expect(requests).toBeLessThan(13)
      const spent = record.result!.tokens
      expect(spent.input + spent.output).toBeGreaterThan(cap)
      expect(spent.input + spent.output).toBeGreaterThan(atKill)
    } finally {
      await closeServe(serve)
    }
  })
}, 180_000)

test("a worker's task_continue turn taken over after its serve was SIGKILLed adds that turn once: the parked copy's earlier turn is not counted again", async () => {
  const repo = await makeRepo(world)
  const first = await call("worker", { cwd: repo, task: "[script:slow_second] look" })
  expect(first.status).toBe("succeeded")
  const serve = await serveFromSource()
  try {
    const id = first.task_id
    const continued = structured(
      await serve.client.callTool({ name: "task_continue", arguments: { task_id: id, task: "and the source" } }),
    )
    expect(continued.status).toBe("running")
    // Killed while the continued turn waits on its last answer.
    const waiting = () =>
      world.model.requests.some(
        (r) => r.play.kind === "step" && r.play.script === "slow_second" && r.play.turn === 1 && r.play.step === 1,
      )
    const deadline = Date.now() + 30_000
    while (!waiting() && Date.now() < deadline) await Bun.sleep(50)
    await Bun.sleep(300)
    process.kill(serve.pid, "SIGKILL")
    const record = await settledRecord(id)
    expect(record.status).toBe("succeeded")
    expect(record.result!.report).toBe("second turn")
    const bill = billOf(record.sessions)
    expect({ input: record.result!.tokens.input, output: record.result!.tokens.output }).toEqual(bill)
  } finally {
    await closeServe(serve)
  }
}, 120_000)

test("a continued turn that finished while no process followed it (serve and watchdog SIGKILLed) is counted once by the next one", async () => {
  const repo = await makeRepo(world)
  const first = await call("worker", { cwd: repo, task: "[script:slow_second] look" })
  expect(first.status).toBe("succeeded")
  const serve = await serveFromSource()
  const id = first.task_id
  try {
    expect(
      structured(
        await serve.client.callTool({ name: "task_continue", arguments: { task_id: id, task: "and the source" } }),
      ).status,
    ).toBe("running")
    const last = () => lastOf(id)
    const deadline = Date.now() + 30_000
    while (!(await last()) && Date.now() < deadline) await Bun.sleep(50)
    // Nobody is left to follow the turn: its watchdog first, then the serve.
    for (const pid of await watchdogsOf(serve.pid)) process.kill(pid, "SIGKILL")
    process.kill(serve.pid, "SIGKILL")
    // The session answers its last step with no process following it.
    while (!(await last())?.billed && Date.now() < deadline + 30_000) await Bun.sleep(100)
    await Bun.sleep(1000)
    expect((await recordOf(id)).status).toBe("running")
  } finally {
    await serve.close().catch(() => undefined)
  }
  const next = await connect(world)
  try {
    const record = (await next.delegations.follow(String(id), { budgetMs: 60_000 }))!
    expect(record.status).toBe("succeeded")
    expect(record.result!.report).toBe("second turn")
    expect({ input: record.result!.tokens.input, output: record.result!.tokens.output }).toEqual(
      billOf(record.sessions),
    )
  } finally {
    await next.close()
  }
}, 120_000)

/** The continued turn's last request: in the task's newest session, its second step. */
async function lastOf(id: unknown) {
  const sessions = (await recordOf(id)).sessions
  return world.model.requests.find(
    (r) =>
      r.play.kind === "step" &&
      r.play.script === "slow_second" &&
      r.play.turn === 1 &&
      r.play.step === 1 &&
      sessions.includes(r.sessionId ?? ""),
  )
}
