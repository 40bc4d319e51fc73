// Tasks that outlive the call, progress in order, and permission asks answered by policy, on the
// real OpenCode with the scripted model. One OpenCode server for the whole file.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { Client } from "@modelcontextprotocol/client"
import type { Flags } from "../../src/config/flags"
import { runTurn } from "../../src/engine/turn/turn"
import { connect, makeRepo, startWorld, stopWorld, structured, text, type Connected, type World } from "./_setup"

let world: World

beforeAll(async () => {
  world = await startWorld({
    slow: {
      turns: [
        {
          steps: [
            { tool: "glob", args: { pattern: "*.md" }, delayMs: 2500 },
            { text: "slow report", delayMs: 1500 },
          ],
        },
      ],
    },
    progress: {
      turns: [
        {
          steps: [
            { tool: "read", args: { filePath: "src/tally.ts" }, fail: { kind: "429", retryAfterSeconds: 0 } },
            {
              tool: "edit",
              args: { filePath: "src/tally.ts", oldString: "words.length", newString: "words.length + 0" },
            },
            { text: "Edited src/tally.ts." },
          ],
        },
      ],
    },
    quiet: {
      turns: [
        {
          steps: [
            { tool: "read", args: { filePath: "src/tally.ts" } },
            { text: "quiet report", delayMs: 5000 },
          ],
        },
      ],
    },
    quick: { turns: [{ steps: [{ text: "quick report" }] }] },
    ask: {
      turns: [
        {
          steps: [
            { tool: "read", args: { filePath: "README.md" } },
            { text: "Reading was refused: {{lastToolOutput}}" },
          ],
        },
      ],
    },
  })
})

afterAll(() => stopWorld(world))

/** A test that runs `body` with a fresh repository and a client of a server with `flags`, closed after it. */
const inRepo = (flags: Partial<Flags>, body: (mcp: Connected, repo: string) => Promise<void>) => async () => {
  const repo = await makeRepo(world)
  const mcp = await connect(world, flags)
  try {
    await body(mcp, repo)
  } finally {
    await mcp.close()
  }
}

/** A scout's structured answer in `repo`. */
const scout = async (client: Client, repo: string, task: string) =>
  structured(await client.callTool({ name: "scout", arguments: { cwd: repo, task } }))

test(
  "a task longer than the sync budget returns running; task_status waits on progress and task_result delivers it",
  inRepo({ syncBudgetMs: 1000 }, async ({ client }, repo) => {
    const first = await scout(client, repo, "Slow look [script:slow]")
    // The script takes 4 s of model time: "running" is the proof the call came back before the task
    // ended (a wall-clock bound here only measured how loaded the machine was).
    expect(first.status).toBe("running")
    const id = String(first.task_id)

    const early = structured(await client.callTool({ name: "task_result", arguments: { task_id: id } }))
    expect(early.status).toBe("running")

    let status = structured(await client.callTool({ name: "task_status", arguments: { task_id: id } }))
    const seen: number[] = []
    while (status.status === "running") {
      seen.push(Number(status.revision))
      status = structured(
        await client.callTool({
          name: "task_status",
          arguments: { task_id: id, wait_seconds: 20, after_revision: Number(status.revision) },
        }),
      )
    }
    expect(status.status).toBe("succeeded")
    // The waits woke on progress (several revisions), not once at the end.
    expect(seen.length).toBeGreaterThan(1)

    const result = structured(await client.callTool({ name: "task_result", arguments: { task_id: id } }))
    expect(result.status).toBe("succeeded")
    expect(result.report).toBe("slow report")
    expect(result.files_changed).toEqual([])
  }),
  90_000,
)

test(
  "task_cancel on a finished task cancels nothing and says so; its status and record stay as they were",
  inRepo({}, async ({ client }, repo) => {
    const done = await scout(client, repo, "Quick look [script:quick]")
    expect(done.status).toBe("succeeded")
    const id = String(done.task_id)
    const answer = await client.callTool({ name: "task_cancel", arguments: { task_id: id } })
    const after = structured(answer)
    expect(after.status).toBe("succeeded")
    expect(after.report).toBe(done.report)
    expect(String(after.next)).toStartWith(`Task ${id} had already finished (succeeded); nothing was cancelled.`)
    expect(text(answer).split("\n")[0]).toBe(`Task ${id} had already finished (succeeded); nothing was cancelled.`)
    expect(answer.isError).toBeFalsy()
    // Cancelling again is the same answer; the stored task is unchanged.
    expect(structured(await client.callTool({ name: "task_cancel", arguments: { task_id: id } })).status).toBe(
      "succeeded",
    )
    const result = structured(await client.callTool({ name: "task_result", arguments: { task_id: id } }))
    expect([result.status, result.report, result.next]).toEqual([done.status, done.report, done.next])
  }),
  120_000,
)

test(
  "control: task_cancel on a running task cancels it, with no such note",
  inRepo({ syncBudgetMs: 1000 }, async ({ client }, repo) => {
    const first = await scout(client, repo, "Slow look [script:slow]")
    expect(first.status).toBe("running")
    const cancelled = await client.callTool({ name: "task_cancel", arguments: { task_id: String(first.task_id) } })
    expect(structured(cancelled).status).toBe("cancelled")
    expect(text(cancelled)).not.toContain("nothing was cancelled")
  }),
  120_000,
)

test(
  "task_status shows a running task's liveness: its step, its last tool and target, the seconds since its latest event",
  inRepo({ syncBudgetMs: 1000 }, async ({ client }, repo) => {
    const first = await scout(client, repo, "Quiet look [script:quiet]")
    const id = String(first.task_id)
    const status = async (wait = 0, after?: number) =>
      structured(
        await client.callTool({
          name: "task_status",
          arguments: { task_id: id, wait_seconds: wait, ...(after === undefined ? {} : { after_revision: after }) },
        }),
      )
    // Step 2 begins once the read is done; the model then sends its first chunk and goes quiet. Each wait
    // ends at the task's next revision, however loaded the machine is.
    let current = await status()
    while (current.status === "running" && !(current.step === 2 && current.last_tool === "read"))
      current = await status(10, Number(current.revision))
    expect(current).toMatchObject({ status: "running", step: 2, last_tool: "read", last_target: "src/tally.ts" })
    await Bun.sleep(2500)
    const quiet = await client.callTool({ name: "task_status", arguments: { task_id: id } })
    expect(structured(quiet).seconds_since_event as number).toBeGreaterThanOrEqual(2)
    expect(text(quiet)).toMatch(/step 2 · last: read src\/tally\.ts · \d+s since the last event/)

    let done = await status(20)
    while (done.status === "running") done = await status(20)
    expect(done.status).toBe("succeeded")
    expect(done.seconds_since_event).toBeUndefined()
  }),
  90_000,
)

test(
  "progress notifications arrive in order: steps, the retry, tool calls with their targets, the edit",
  inRepo({}, async ({ client }, repo) => {
    const lines: { progress: number; message: string }[] = []
    const result = await client.callTool(
      { name: "worker", arguments: { cwd: repo, task: "Touch tally [script:progress]" } },
      {
        onprogress: (p) => lines.push({ progress: p.progress, message: p.message ?? "" }),
      },
    )
    expect(structured(result).status).toBe("succeeded")
    const messages = lines.map((line) => line.message)
    expect(lines.map((line) => line.progress)).toEqual(lines.map((_, i) => i + 1))
    const at = (pattern: RegExp) => messages.findIndex((m) => pattern.test(m))
    expect(at(/^retrying \(/)).toBeGreaterThanOrEqual(0)
    expect(at(/^step 1$/)).toBeLessThan(at(/^read src\/tally\.ts$/))
    expect(at(/^read src\/tally\.ts$/)).toBeLessThan(at(/^step 2$/))
    expect(at(/^step 2$/)).toBeLessThan(at(/^edit src\/tally\.ts$/))
    expect(at(/^edit src\/tally\.ts$/)).toBeLessThan(at(/^edited src\/tally\.ts$/))
    expect(at(/^edited src\/tally\.ts$/)).toBeLessThan(at(/^step 3$/))
    // No call announced before its input was known.
    expect(messages).not.toContain("read")
    expect(messages).not.toContain("edit")
  }),
  90_000,
)

test(
  "a permission ask from an orchestrator session is answered by policy, so the run never hangs",
  inRepo({}, async ({ runtime }, repo) => {
    const { client, hub } = await runtime.opencode()
    // The session's own ruleset turns `read` into `ask`: OpenCode raises permission.asked and waits.
    const created = await client.session.create({
      directory: repo,
      title: "ask probe",
      permission: [{ permission: "read", pattern: "*", action: "ask" }],
    })
    const sessionID = created.data!.id
    const lines: string[] = []
    const turn = await runTurn(
      {
        client,
        hub,
        workspace: repo,
        agent: "opencode-orchestrator-scout",
        title: "ask probe",
        deadline: Date.now() + 30_000,
        signal: new AbortController().signal,
        sessionID,
        onSession: async () => {},
        onProgress: (line) => lines.push(line),
      },
      "Read the README. [script:ask]",
    )
    expect(turn.outcome.kind).toBe("idle")
    expect(lines.some((line) => line.startsWith("refused a permission request (read"))).toBe(true)
    expect(turn.transcript?.text).toContain("Reading was refused")
    expect(turn.transcript?.tools.find((call) => call.tool === "read")?.status).toBe("error")
    await client.session.delete({ sessionID, directory: repo })
  }),
  60_000,
)
