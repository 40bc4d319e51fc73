// Roles the person defines, on the real OpenCode with the scripted model: a role backed by the person's own
// OpenCode agent runs read-only whatever that agent's permissions say (its prompt reaches the model, its
// edit and bash do not reach the workspace); the same steps as a write role change the file, with scope and
// verify as a worker has them; a Claude Code subagent file is a role, an unmappable one is refused with its
// reason; policy.roles refuses a role in sensitive mode and a write role there needs mechanical: true; a
// workspace's own .claude/agents is read only where config.json opts the workspace in.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { writeJson } from "../../src/util/fs"
import { connect, makeRepo, startWorld, stopWorld, structured, text, type Connected, type World } from "../mcp/_setup"

let world: World
let mcp: Connected
let opted: string
let promptFile: string

const LIBRARIAN = "LIBRARIAN-PROMPT-7f3: you keep the project's documents in order."
const FIXER = "FIXER-PROMPT-2c9: you make small, exact fixes."
const REVIEWER = "REVIEWER-LITE-PROMPT-41b: you review for naming."
const PLANTED = "PLANTED-PROMPT-9d0: you were written into the repository."

const subagent = (name: string, tools: string, body: string) =>
  `---\nname: ${name}\ndescription: ${name} from a subagent file\ntools: ${tools}\nmodel: sonnet\n---\n\n${body}\n`

beforeAll(async () => {
  world = await startWorld({
    write_attempt: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "src/made.txt", content: "made\n" } },
            { tool: "bash", args: { command: "touch bashed.txt", description: "touch a file" } },
            { text: "tried to write" },
          ],
        },
      ],
    },
    quick: { turns: [{ steps: [{ text: "quick report" }] }] },
    two_turns: { turns: [{ steps: [{ text: "first report" }] }, { steps: [{ text: "second report" }] }] },
  })
  const home = world.home.paths.home
  // The person's OpenCode agent, with permissions wider than any read-only role may have.
  await mkdir(world.home.paths.opencodeAgentsDir, { recursive: true })
  await writeFile(
    join(world.home.paths.opencodeAgentsDir, "librarian.md"),
    `---\ndescription: Keeps documents\nmode: subagent\npermission:\n  edit: allow\n  bash: allow\n---\n\n${LIBRARIAN}\n`,
  )
  promptFile = join(home, "fixer.md")
  await writeFile(promptFile, `${FIXER}\n`)
  await mkdir(join(home, ".claude", "agents"), { recursive: true })
  await writeFile(
    join(home, ".claude", "agents", "reviewer-lite.md"),
    subagent("reviewer-lite", "Read, Grep", REVIEWER),
  )
  await writeFile(join(home, ".claude", "agents", "web-helper.md"), subagent("web-helper", "Read, WebFetch", "fetch"))
  opted = await makeRepo(world)
  const config = JSON.parse(await readFile(world.home.paths.configFile, "utf8"))
  await writeJson(world.home.paths.configFile, {
    ...config,
    roles: {
      "docs-reader": { agent: "librarian", profile: "read-only", description: "Reads the docs" },
      fixer: { prompt: promptFile, profile: "write", description: "Small exact fixes" },
    },
    claudeAgents: { user: true, workspaces: [opted] },
    policy: { ...config.policy, roles: { sensitive: ["docs-reader", "fixer"] } },
  })
  mcp = await connect(world)
}, 120_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

const call = (name: string, args: Record<string, unknown>) =>
  mcp.client.callTool({ name, arguments: args }, { timeout: 120_000 })

/** Whether a request the scripted model received for `script` carried `needle` (the system text included). */
const modelSaw = (script: string, needle: string) =>
  world.model
    .stepRequests()
    .some(
      (request) =>
        JSON.stringify(request.body).includes(`[script:${script}]`) && JSON.stringify(request.body).includes(needle),
    )

test("attack: a role following the person's OpenCode agent (edit and bash allowed there) runs read-only; its prompt reaches the model", async () => {
  const repo = await makeRepo(world)
  world.model.reset()
  const result = structured(
    await call("scout", { cwd: repo, task: "[script:write_attempt] tidy", role: "docs-reader" }),
  )
  expect(result.status).toBe("succeeded")
  expect(modelSaw("write_attempt", LIBRARIAN)).toBe(true)
  expect(existsSync(join(repo, "src/made.txt"))).toBe(false)
  expect(existsSync(join(repo, "bashed.txt"))).toBe(false)
  // Neither tool is offered to a read-only role's session, whatever the person's agent allows.
  const outputs = world.model.toolResults().map((result) => result.output)
  expect(outputs.some((output) => output.includes("unavailable tool 'write'"))).toBe(true)
  expect(outputs.some((output) => output.includes("unavailable tool 'bash'"))).toBe(true)
  const record = await mcp.delegations.read(String(result.task_id))
  expect(record?.userRole?.name).toBe("docs-reader")
  expect(record?.title).toContain("scout:docs-reader")
  expect(record?.progress[0]).toBe("as role docs-reader (config.json)")
  expect(result.role).toBe("docs-reader")
  expect(structured(await call("task_status", { task_id: result.task_id })).role).toBe("scout:docs-reader")
  // The ledger counts the role on a row of its own.
  const stats = structured(await call("stats", {}))
  expect(JSON.stringify(stats.rows)).toContain('"role":"scout:docs-reader"')
}, 120_000)

test("control: the same steps as a write role (a prompt file) change the file, with scope and verify as a worker's", async () => {
  const repo = await makeRepo(world)
  world.model.reset()
  const result = structured(
    await call("worker", {
      cwd: repo,
      task: "[script:write_attempt] make the file",
      role: "fixer",
      scope: ["src/**"],
      verify: "test -f src/made.txt",
    }),
  )
  expect(modelSaw("write_attempt", FIXER)).toBe(true)
  expect(await readFile(join(repo, "src/made.txt"), "utf8")).toBe("made\n")
  expect(result.tool_calls).toContainEqual({ tool: "write", status: "completed", target: "src/made.txt" })
  expect(result.verification).toMatchObject({ exit_code: 0 })
  expect(result.status).toBe("succeeded")
}, 120_000)

test("a continued task runs the same role: its prompt goes with the next turn too", async () => {
  const repo = await makeRepo(world)
  world.model.reset()
  const first = structured(await call("scout", { cwd: repo, task: "[script:two_turns] look", role: "docs-reader" }))
  expect(first.status).toBe("succeeded")
  const second = structured(await call("task_continue", { task_id: first.task_id, task: "look further" }))
  expect(second.report).toContain("second report")
  const turnTwo = world.model
    .stepRequests()
    .filter((request) => request.play.kind === "step" && request.play.turn === 1)
  expect(turnTwo.length).toBeGreaterThan(0)
  expect(turnTwo.every((request) => JSON.stringify(request.body).includes(LIBRARIAN))).toBe(true)
}, 120_000)

test("a role is run only by its profile's tool: a read-only role through worker is refused, naming scout", async () => {
  const repo = await makeRepo(world)
  const result = await call("worker", { cwd: repo, task: "[script:quick] x", role: "docs-reader" })
  expect(result.isError).toBe(true)
  expect(text(result)).toContain('Call scout with role "docs-reader"')
}, 120_000)

test("a Claude Code subagent file of the person's is a role; one with a tool that has no counterpart is refused with it", async () => {
  const repo = await makeRepo(world)
  world.model.reset()
  const result = structured(await call("scout", { cwd: repo, task: "[script:quick] look", role: "reviewer-lite" }))
  expect(result.status).toBe("succeeded")
  expect(modelSaw("quick", REVIEWER)).toBe(true)
  const refused = await call("scout", { cwd: repo, task: "[script:quick] look", role: "web-helper" })
  expect(refused.isError).toBe(true)
  expect(text(refused)).toContain('its tool "WebFetch" has no counterpart')
  const listed = structured(await call("policy", { cwd: repo }))
  const roles = listed.roles as { name: string; tool?: string; allowed: string }[]
  expect(roles.find((role) => role.name === "reviewer-lite")).toMatchObject({ tool: "scout", allowed: "allowed" })
  expect(roles.find((role) => role.name === "fixer")).toMatchObject({ tool: "worker", allowed: "allowed" })
  expect(roles.find((role) => role.name === "web-helper")?.allowed).toContain("cannot run")
}, 120_000)

test("policy.roles: sensitive mode refuses a role it does not list; a write role it lists runs only with mechanical: true", async () => {
  const repo = await makeRepo(world)
  const outside = await call("scout", {
    cwd: repo,
    task: "[script:quick] look",
    role: "reviewer-lite",
    mode: "sensitive",
  })
  expect(outside.isError).toBe(true)
  expect(text(outside)).toContain("roles in sensitive mode")
  const unmechanical = await call("worker", { cwd: repo, task: "[script:quick] fix", role: "fixer", mode: "sensitive" })
  expect(unmechanical.isError).toBe(true)
  expect(text(unmechanical)).toContain("mechanical: true")
  // Controls: a listed read-only role, and the write role with mechanical: true.
  const listed = structured(
    await call("scout", { cwd: repo, task: "[script:quick] look", role: "docs-reader", mode: "sensitive" }),
  )
  expect(listed.status).toBe("succeeded")
  const mechanical = structured(
    await call("worker", { cwd: repo, task: "[script:quick] fix", role: "fixer", mode: "sensitive", mechanical: true }),
  )
  expect(mechanical.status).toBe("succeeded")
}, 120_000)

test("attack: a subagent file planted in a workspace is no role there; control: the same file where config.json opts in runs", async () => {
  const planted = await makeRepo(world)
  for (const repo of [planted, opted]) {
    await mkdir(join(repo, ".claude", "agents"), { recursive: true })
    await writeFile(join(repo, ".claude", "agents", "planted.md"), subagent("planted", "Read", PLANTED))
  }
  const refused = await call("scout", { cwd: planted, task: "[script:quick] look", role: "planted" })
  expect(refused.isError).toBe(true)
  expect(text(refused)).toContain('There is no role "planted"')
  world.model.reset()
  const ran = structured(await call("scout", { cwd: opted, task: "[script:quick] look", role: "planted" }))
  expect(ran.status).toBe("succeeded")
  expect(modelSaw("quick", PLANTED)).toBe(true)
}, 120_000)
