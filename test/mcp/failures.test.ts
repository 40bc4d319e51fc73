// Failed delegations on the real OpenCode with the scripted model: the result says why (error_kind,
// advice, next) beside OpenCode's own error text; a scout's transient failure is run again in a new
// session and succeeds, a worker's is not, and a failure retrying cannot fix is not retried; and the
// savings ledger (stats) over those tasks matches their records.
import { expect, test } from "bun:test"
import { battery, makeRepo, structured, text } from "./_battery"

// `per: "server"` counts the failures across sessions, so a fresh session gets through once they are spent:
// more than OpenCode's own retries of one session use up (it gives up on a 429 after a handful).
const rateLimited = { kind: "429", times: 7, per: "server", retryAfterSeconds: 1 } as const
const { world, mcp, call, recordOf, withConfig } = battery({
  scout_429: { turns: [{ steps: [{ text: "found it after the rate limit", fail: rateLimited }] }] },
  worker_429: { turns: [{ steps: [{ text: "never", fail: rateLimited }] }] },
  bad_key: { turns: [{ steps: [{ text: "never", fail: { kind: "401", times: "always" } }] }] },
  long_read: {
    turns: [
      {
        steps: [
          ...Array.from({ length: 9 }, () => ({ tool: "read", args: { filePath: "src/tally.ts" } })),
          { text: "read it nine times" },
        ],
      },
    ],
  },
})

const sessionsHit = (script: string) =>
  new Set(
    world.model.requests.filter((r) => r.play.kind !== "title" && r.play.script === script).map((r) => r.sessionId),
  ).size

test("a scout rate limited until OpenCode gives up is run again in a new session, visibly, and succeeds", async () => {
  const repo = await makeRepo(world)
  const result = await call("scout", { cwd: repo, task: "[script:scout_429] look" })
  expect(result.status).toBe("succeeded")
  expect(result.report).toBe("found it after the rate limit")
  expect(result.error_kind).toBeUndefined()
  const record = await recordOf(result.task_id)
  expect(record.progress.some((line) => line.startsWith("rate_limit: running the task again in a new session"))).toBe(
    true,
  )
  expect(sessionsHit("scout_429")).toBeGreaterThanOrEqual(2)
}, 120_000)

test("a worker failing the same way is not run again: it fails with error_kind rate_limit and the wait to take", async () => {
  const repo = await makeRepo(world)
  const result = await call("worker", { cwd: repo, task: "[script:worker_429] edit" })
  expect(result.status).toBe("failed")
  expect(result.error).toContain("HTTP 429")
  expect(result.error_kind).toBe("rate_limit")
  expect(result.retry_after_s).toBe(1)
  expect(result.next).toContain("Wait 1 s")
  expect(String(result.advice)).toContain("rate limiting")
  expect(sessionsHit("worker_429")).toBe(1)
}, 120_000)

test("a scout refused for its API key fails at once as auth, and is not retried", async () => {
  const repo = await makeRepo(world)
  const result = await call("scout", { cwd: repo, task: "[script:bad_key] look" })
  expect(result.status).toBe("failed")
  expect(result.error_kind).toBe("auth")
  expect(result.next).toContain("opencode auth login")
  expect(sessionsHit("bad_key")).toBe(1)
}, 60_000)

test("stats over the tasks above: the ledger's sums match the task records, and a success kept bytes out", async () => {
  const records = (await mcp.delegations.list()).filter((record) => record.result)
  expect(records.length).toBe(3)
  const stats = structured(await mcp.client.callTool({ name: "stats", arguments: { since: "1h" } })) as unknown as {
    rows: {
      role: string
      tasks: number
      succeeded: number
      cost: number
      bytes_kept_out: number
      tokens: { input: number }
    }[]
    total: {
      tasks: number
      succeeded: number
      tokens: { input: number }
      bytes_kept_out: number
      bytes_returned: number
    }
  }
  expect(stats.total.tasks).toBe(3)
  expect(stats.total.succeeded).toBe(1)
  expect(stats.total.tokens.input).toBe(records.reduce((sum, record) => sum + record.result!.tokens.input, 0))
  expect(stats.total.bytes_kept_out).toBe(
    records.reduce((sum, record) => sum + (record.result!.bytes?.keptOut ?? 0), 0),
  )
  expect(stats.rows.find((row) => row.role === "scout")).toMatchObject({ tasks: 2, succeeded: 1 })
  const scout = records.find((record) => record.status === "succeeded")!.result!
  expect(scout.bytes!.transcript).toBeGreaterThan(0)
  // returned is what the parent's model receives of task_result: its structured content, not the text block.
  const fetched = await mcp.client.callTool({ name: "task_result", arguments: { task_id: scout.taskID } })
  expect(scout.bytes!.returned).toBe(Buffer.byteLength(JSON.stringify(fetched.structuredContent)))
  expect(scout.bytes!.returned).toBeGreaterThan(Buffer.byteLength(text(fetched)))
  expect(scout.bytes!.keptOut).toBe(Math.max(0, scout.bytes!.transcript + scout.bytes!.logs - scout.bytes!.returned))
  expect(stats.total).toMatchObject({
    bytes_returned: records.reduce((sum, record) => sum + (record.result!.bytes?.returned ?? 0), 0),
  })
  // Nothing finished in the future: the period is honoured.
  const none = await mcp.client.callTool({ name: "stats", arguments: { since: "2099-01-01" } })
  expect(text(none)).toBe("No finished tasks since 2099-01-01T00:00:00.000Z.")
}, 30_000)

test("a scout past its token cap stops at the next finished step and fails as budget; uncapped, the same scout runs to its end (control)", async () => {
  const repo = await makeRepo(world)
  const requestsOf = (id: string) =>
    world.model.requests.filter((r) => r.play.kind !== "title" && r.sessionId === id).length
  const uncapped = await call("scout", { cwd: repo, task: "[script:long_read] read it" })
  expect(uncapped.status).toBe("succeeded")
  const spent = (await recordOf(uncapped.task_id)).result!.tokens
  const total = spent.input + spent.output + spent.reasoning + spent.cacheRead + spent.cacheWrite
  const uncappedSession = (await recordOf(uncapped.task_id)).sessions[0]!
  expect(requestsOf(uncappedSession)).toBe(10)
  // A third of what the whole run used: reached a few steps in.
  const cap = Math.floor(total / 3)
  await withConfig({ maxTokensPerTask: cap }, async () => {
    const capped = await call("scout", { cwd: repo, task: "[script:long_read] read it" })
    expect(capped.status).toBe("failed")
    expect(capped.error_kind).toBe("budget")
    expect(String(capped.error)).toContain(`past its cap of ${cap.toLocaleString("en-US")} (maxTokensPerTask)`)
    expect(String(capped.next)).toContain("raise the cap")
    const record = await recordOf(capped.task_id)
    expect(record.progress.some((line) => line.startsWith("stopped: the task used"))).toBe(true)
    // Stopped well before the end, and not run again (a spent cap is not a transient failure).
    expect(record.sessions.length).toBe(1)
    expect(requestsOf(record.sessions[0]!)).toBeLessThan(8)
    const used = record.result!.tokens
    expect(used.input + used.output).toBeGreaterThan(cap)
  })
}, 180_000)
