// The delegation policy on the real OpenCode, through the MCP SDK Client: a refused call is an isError
// result naming the rule and the next step, and nothing behind it ran (no model request, no task
// record, no lock, no session); an allowed call in the same workspace runs as usual.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { mkdir } from "node:fs/promises"
import { connect as connectOpencode } from "../../src/opencode/client"
import { readServerRecord } from "../../src/opencode/server"
import { connect, lockFiles, makeRepo, startWorld, stopWorld, structured, taskFiles, text, type World } from "./_setup"

let world: World

beforeAll(async () => {
  world = await startWorld({
    rename: {
      turns: [
        {
          steps: [
            {
              tool: "edit",
              args: {
                filePath: "src/tally.ts",
                oldString: "export function count",
                newString: "export function countWords",
              },
            },
            { text: "Renamed count to countWords." },
          ],
        },
      ],
    },
    ask: {
      turns: [
        {
          steps: [
            {
              tool: "question",
              args: {
                questions: [
                  { question: "Which name?", header: "Name", options: [{ label: "countWords", description: "clear" }] },
                ],
              },
            },
            { text: "Question tool said: {{lastToolOutput}}" },
          ],
        },
      ],
    },
  })
})

afterAll(() => stopWorld(world))

// Deterministic and random-looking: the guard must not depend on the value being implausible.
const FAKE_TOKEN = `ghp_${Array.from({ length: 36 }, (_, i) => "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"[(i * 7) % 40]).join("")}`

async function sessionsIn(directory: string) {
  const record = await readServerRecord(world.home.paths)
  if (!record) return []
  return (
    (await connectOpencode(record, { standIns: world.home.paths.opencodeDirsDir }).session.list({ directory })).data ??
    []
  ).map((session) => session.id)
}

/** Nothing ran: the scripted model saw no request, and no record, lock or session was added. */
async function expectNothingStarted(
  repo: string,
  before: { tasks: string[]; sessions: string[] } = { tasks: [], sessions: [] },
) {
  expect(world.model.requests).toEqual([])
  expect(await taskFiles(world)).toEqual(before.tasks)
  expect(await lockFiles(world)).toEqual([])
  expect(await sessionsIn(repo)).toEqual(before.sessions)
}

test("a brief carrying a GitHub token is refused with its kind and position, never its value, and nothing starts", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    world.model.reset()
    for (const call of [
      { name: "worker", arguments: { cwd: repo, task: `Set up the release.\nUse ${FAKE_TOKEN} to push.` } },
      {
        name: "runner",
        arguments: { cwd: repo, command: `GH_TOKEN=${FAKE_TOKEN} gh release list`, objective: "see the releases" },
      },
    ]) {
      const result = await client.callTool(call)
      expect(result.isError).toBe(true)
      expect(text(result)).toContain("Refused by policy (secret guard)")
      expect(text(result)).toContain(
        call.name === "worker" ? "GitHub token at task 2:5" : "GitHub token at command 1:10",
      )
      expect(text(result)).toContain("next: Remove the secret")
      expect(text(result)).not.toContain(FAKE_TOKEN.slice(4))
    }
    await expectNothingStarted(repo)
  } finally {
    await close()
  }
}, 60_000)

test('tier "hard" (and "unsure") is refused, telling the parent to do the work itself; nothing starts', async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    world.model.reset()
    for (const tier of ["hard", "unsure"]) {
      const result = await client.callTool({
        name: "scout",
        arguments: { cwd: repo, task: "Redesign the storage layer. [script:demo]", tier },
      })
      expect(result.isError).toBe(true)
      expect(text(result)).toContain(`Refused by policy (tier): A delegation marked tier "${tier}" is not delegated`)
      expect(text(result)).toContain("next: Do this work yourself")
    }
    await expectNothingStarted(repo)
  } finally {
    await close()
  }
}, 60_000)

test("in a workspace marked .claude/sensitive a scout runs, while a worker is refused (even from a subdirectory, even with mode insensitive) and a mechanical worker runs; the policy tool says why", async () => {
  const repo = await makeRepo(world)
  await mkdir(`${repo}/.claude`, { recursive: true })
  await Bun.write(`${repo}/.claude/sensitive`, "")
  const { client, close } = await connect(world)
  try {
    // Control first, so the refusals below happen with OpenCode up and a task already recorded.
    const scout = structured(
      await client.callTool({
        name: "scout",
        arguments: { cwd: repo, task: "Look around. [script:demo]", tier: "easy" },
      }),
    )
    expect(scout.status).toBe("succeeded")

    world.model.reset()
    const before = { tasks: await taskFiles(world), sessions: await sessionsIn(repo) }
    expect(before.tasks).toHaveLength(1)
    const refusedCalls = [
      { name: "worker", arguments: { cwd: repo, task: "Count distinct words. [script:rename]" } },
      {
        name: "worker",
        arguments: { cwd: `${repo}/src`, task: "Count distinct words. [script:rename]", mode: "insensitive" },
      },
      {
        name: "runner",
        arguments: { cwd: repo, command: "bun test", objective: "do the tests pass", workspace_access: "writable" },
      },
    ]
    for (const call of refusedCalls) {
      const result = await client.callTool(call)
      expect(result.isError).toBe(true)
      expect(text(result)).toContain("Refused by policy (sensitive mode)")
      expect(text(result)).toContain(`marker file ${repo}/.claude/sensitive`)
    }
    expect(text(await client.callTool(refusedCalls[0]!))).toContain("mechanical: true")
    expect(await readServerRecord(world.home.paths)).toBeDefined()
    await expectNothingStarted(repo, before)

    const policy = await client.callTool({ name: "policy", arguments: { cwd: `${repo}/src` } })
    expect(policy.isError).toBeFalsy()
    expect(structured(policy)).toMatchObject({
      project_root: repo,
      mode: "sensitive",
      source: `marker file ${repo}/.claude/sensitive`,
      statements: [{ source: "marker", mode: "sensitive", where: `${repo}/.claude/sensitive` }],
      overruled: [],
      allowed: {
        scout: "allowed",
        worker: "only with mechanical: true (a change the brief spells out exactly)",
        runner: 'only workspace_access "read_only" with network_access "disabled"',
      },
      tiers: { required: false, delegated: ["easy", "medium"], refused: ["hard", "unsure"] },
    })
    expect(text(policy)).toContain(`mode: sensitive (marker file ${repo}/.claude/sensitive)`)

    const worker = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd: repo, task: "Rename count to countWords in src/tally.ts. [script:rename]", mechanical: true },
      }),
    )
    expect(worker.status).toBe("succeeded")
    expect(worker.files_changed).toEqual([{ path: "src/tally.ts", change: "modified" }])
  } finally {
    await close()
  }
}, 120_000)

test("the policy tool in an unmarked workspace: blueprint by default, and a mode argument shows its effect", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    const plain = structured(await client.callTool({ name: "policy", arguments: { cwd: repo } }))
    expect(plain).toMatchObject({ mode: "blueprint", source: "the default: nothing states a mode", statements: [] })
    const asked = structured(await client.callTool({ name: "policy", arguments: { cwd: repo, mode: "sensitive" } }))
    expect(asked).toMatchObject({ mode: "sensitive", source: "the call's mode argument" })
  } finally {
    await close()
  }
}, 60_000)

test("config.json policy.requireTier refuses a call without a tier; OPENCODE_MCP_ORCHESTRATOR_MODE=sensitive refuses a worker; nothing starts", async () => {
  const repo = await makeRepo(world)
  const file = world.home.paths.configFile
  const original = await Bun.file(file).text()
  await Bun.write(file, JSON.stringify({ ...JSON.parse(original), policy: { requireTier: true } }))
  const { client, close } = await connect(world, { mode: "sensitive" })
  try {
    world.model.reset()
    const before = { tasks: await taskFiles(world), sessions: await sessionsIn(repo) }
    const untiered = await client.callTool({
      name: "scout",
      arguments: { cwd: repo, task: "Look around. [script:demo]" },
    })
    expect(untiered.isError).toBe(true)
    expect(text(untiered)).toContain("Refused by policy (tier)")
    expect(text(untiered)).toContain("policy.requireTier")
    const worker = await client.callTool({
      name: "worker",
      arguments: { cwd: repo, task: "Count distinct words. [script:rename]", tier: "easy" },
    })
    expect(worker.isError).toBe(true)
    expect(text(worker)).toContain("OPENCODE_MCP_ORCHESTRATOR_MODE in the server's environment")
    await expectNothingStarted(repo, before)
  } finally {
    await close()
    await Bun.write(file, original)
  }
}, 60_000)

test("scout, worker and runner list the published arguments as required and the policy arguments as optional", async () => {
  const { client, close } = await connect(world)
  try {
    const { tools } = await client.listTools()
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
    expect(byName.scout!.inputSchema.required).toEqual(["cwd", "task"])
    expect(byName.worker!.inputSchema.required).toEqual(["cwd", "task"])
    expect(byName.runner!.inputSchema.required).toEqual(["cwd", "command", "objective"])
    for (const name of ["scout", "worker", "runner"])
      expect(Object.keys(byName[name]!.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["tier", "mode"]))
    expect(Object.keys(byName.worker!.inputSchema.properties ?? {})).toContain("mechanical")
    expect(Object.keys(byName.scout!.inputSchema.properties ?? {})).not.toContain("mechanical")
    // A continue passes the same policy, so it states the same arguments.
    expect(byName.task_continue!.inputSchema.required).toEqual(["task_id", "task"])
    expect(Object.keys(byName.task_continue!.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["tier", "mode", "mechanical"]),
    )
    expect(byName.policy!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false })
  } finally {
    await close()
  }
})

test("by default (config.json policy.relay empty) no ask reaches anyone: question and webfetch are not offered, even to a client that declares elicitation", async () => {
  const repo = await makeRepo(world)
  const asked: unknown[] = []
  const { client, close } = await connect(world, {}, "relay-default", (request) => {
    asked.push(request.params)
    return { action: "accept", content: { q1: "countWords" } }
  })
  try {
    world.model.reset()
    const progress: string[] = []
    const result = structured(
      await client.callTool(
        { name: "scout", arguments: { cwd: repo, task: "Ask which name. [script:ask]" } },
        { onprogress: (note) => void progress.push(note.message ?? "") },
      ),
    )
    const offered = world.model.stepRequests()[0]!.body.tools?.map((tool) => tool.function.name) ?? []
    expect(offered).toContain("read")
    expect(offered).not.toContain("question")
    expect(offered).not.toContain("webfetch")
    expect(offered).not.toContain("websearch")
    expect(asked).toEqual([])
    expect(progress.some((line) => line.startsWith("asked the person"))).toBe(false)
    expect(result.report).toStartWith("Question tool said:")
    expect(result.report).not.toContain("countWords")
  } finally {
    await close()
  }
}, 60_000)

// Last: its control records a task, and the tests above count tasks from none.
test("a brief carrying a credential in a form the guard used to miss (escaped, flattened, split, in a URL) is refused and nothing starts; an ordinary brief quoting URLs and ids delegates", async () => {
  const repo = await makeRepo(world)
  const body = FAKE_TOKEN.slice(4).repeat(8)
  const pem = [0, 1, 2, 3].map((line) => body.slice(line * 9, line * 9 + 64)).join("\n")
  const serviceAccount = JSON.stringify({
    type: "service_account",
    private_key: `-----BEGIN PRIVATE KEY-----\n${pem}\n-----END PRIVATE KEY-----\n`,
  })
  const split = `${FAKE_TOKEN.slice(0, 12)}\u200b${FAKE_TOKEN.slice(12)}`
  const { client, close } = await connect(world)
  try {
    world.model.reset()
    const before = { tasks: await taskFiles(world), sessions: await sessionsIn(repo) }
    const calls: [{ name: string; arguments: Record<string, unknown> }, string][] = [
      [
        { name: "worker", arguments: { cwd: repo, task: `Deploy with this account:\n${serviceAccount}` } },
        `private key at task 2:${serviceAccount.indexOf("-----BEGIN") + 1}`,
      ],
      [
        { name: "scout", arguments: { cwd: repo, task: `Check the push works with ${split}` } },
        "GitHub token at task 1:27",
      ],
      [
        {
          name: "runner",
          arguments: {
            cwd: repo,
            command: "psql postgres://app:pass@db.internal/orders -c 'select 1'",
            objective: "db up?",
          },
        },
        "password in a URL at command 1:21",
      ],
      [
        {
          name: "scout",
          arguments: {
            cwd: repo,
            task: `curl -H "Authorization: Bearer ${FAKE_TOKEN.slice(4)}" https://api.test/repos`,
          },
        },
        "credential in an Authorization header at task 1:32",
      ],
      [
        {
          name: "worker",
          arguments: { cwd: repo, task: "Log in to the staging admin as root; the password is Sup3r-S3cret-2024." },
        },
        "credential given in prose at task 1:54",
      ],
    ]
    for (const [call, finding] of calls) {
      const result = await client.callTool(call)
      expect(result.isError).toBe(true)
      expect(text(result)).toContain("Refused by policy (secret guard)")
      expect(text(result)).toContain(finding)
      expect(text(result)).not.toContain(FAKE_TOKEN.slice(8, 30))
      expect(text(result)).not.toContain(":pass@")
      expect(text(result)).not.toContain("S3cret-2024")
    }
    await expectNothingStarted(repo, before)

    // Control: the same door delegates a brief that only looks like one.
    const brief =
      "Compare postgres://localhost/db with commit 5ac971b2f0a3c9d8e7f6a5b4c3d2e1f0a9b8c7d6 and request 550e8400-e29b-41d4-a716-446655440000; the password comes from ${DATABASE_URL}. [script:demo]"
    const scout = await client.callTool({ name: "scout", arguments: { cwd: repo, task: brief, tier: "easy" } })
    expect(scout.isError).toBeFalsy()
    expect(structured(scout).status).toBe("succeeded")
    expect(world.model.requests.length).toBeGreaterThan(0)
    expect(await taskFiles(world)).toHaveLength(before.tasks.length + 1)
  } finally {
    await close()
  }
}, 120_000)
