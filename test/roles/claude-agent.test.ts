// A Claude Code subagent file as a role: its tools decide the profile, what has no counterpart refuses the
// file with the reason, and the file is read as hostile text (it may come from a workspace an agent wrote):
// bounded, one pass, never a link or a FIFO followed. The catalog keeps config.json's names first.
import { expect, test } from "bun:test"
import { mkdir, symlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { ConfigSchema } from "../../src/config/schema"
import { mapClaudeAgent, MAX_AGENT_FILE_BYTES } from "../../src/roles/claude-agent"
import { listRoles } from "../../src/roles/catalog"
import { run } from "../../src/util/process"
import { tempDir } from "../helpers/temp"

const file = (front: string, body = "Do the work.") => `---\n${front}\n---\n\n${body}\n`
const base = "name: helper\ndescription: Helps"

test.each([
  ["tools: Read, Grep, Glob", "read-only"],
  ["tools: Read, Edit", "write"],
  ["tools: Bash", "write"],
  ["tools:\n  - Read\n  - Grep", "read-only"],
  ["tools: [Read, Write]", "write"],
] as const)("tools %p map to the %s profile", (tools, profile) => {
  const mapped = mapClaudeAgent(file(`${base}\n${tools}`))
  expect(mapped).toMatchObject({ ok: true, agent: { name: "helper", profile, prompt: "Do the work." } })
})

test("no tools listed: the write profile, and the listing says so", () => {
  const mapped = mapClaudeAgent(file(base))
  expect(mapped).toMatchObject({ ok: true, agent: { profile: "write" } })
  expect(mapped.ok && mapped.agent.notes.join()).toContain("no tools listed")
})

test("a model: Claude Code's names run on the profile's route, an OpenCode id is kept, anything else is refused", () => {
  expect(mapClaudeAgent(file(`${base}\nmodel: opus`))).toMatchObject({ ok: true, agent: { model: undefined } })
  expect(mapClaudeAgent(file(`${base}\nmodel: scripted/fast`))).toMatchObject({
    ok: true,
    agent: { model: "scripted/fast" },
  })
  expect(mapClaudeAgent(file(`${base}\nmodel: gpt-5`))).toMatchObject({ ok: false })
})

test.each([
  [file(`${base}\ntools: Read, WebFetch`), 'its tool "WebFetch" has no counterpart'],
  [file(`${base}\ntools: mcp__github__create_issue`), 'its tool "mcp__github__create_issue" has no counterpart'],
  [file(`${base}\nhooks: x`), 'its frontmatter key "hooks" has no counterpart'],
  [file(`${base}\npermissionMode: acceptEdits`), 'its frontmatter key "permissionMode"'],
  [file("description: Helps"), "no name"],
  [file("name: Helper\ndescription: x"), "is not lower case"],
  [file("name: scout\ndescription: x"), "a built-in role's"],
  [file("name: helper"), "no description"],
  [file(base, "   "), "no prompt"],
  [`---\n${base}\nno end`, "not closed"],
  ["no frontmatter at all", "does not start with"],
  [file(`${base}\nname: again`), 'states "name" twice'],
])("refused: %#", (text, reason) => {
  const mapped = mapClaudeAgent(text)
  expect(mapped.ok).toBe(false)
  expect(!mapped.ok && mapped.reason).toContain(reason)
})

test("hostile sizes: a file over the bound is refused, not cut; the worst shapes within it parse in one pass", () => {
  expect(mapClaudeAgent("x".repeat(MAX_AGENT_FILE_BYTES + 1))).toMatchObject({ ok: false })
  // A tools list of thousands of items, a line of colons, a deep indentation: each read once.
  const items = "  - Read\n".repeat(6000)
  expect(mapClaudeAgent(file(`${base}\ntools:\n${items}`.slice(0, MAX_AGENT_FILE_BYTES - 100)))).toMatchObject({
    ok: true,
    agent: { profile: "read-only" },
  })
  const colons = mapClaudeAgent(file(`${base}\ncolor: ${":".repeat(60_000)}`))
  expect(colons).toMatchObject({ ok: true })
  const nested = mapClaudeAgent(file(`${base}\ncolor: x\n${" ".repeat(30_000)}- deep`))
  expect(nested).toMatchObject({ ok: true })
})

test("the catalog: config.json keeps its name over a subagent file; a link or a FIFO in the folder is refused, never read", async () => {
  await using dir = await tempDir("oc-orch-roles-")
  const agents = join(dir.path, ".claude", "agents")
  await mkdir(agents, { recursive: true })
  await writeFile(join(agents, "fixer.md"), file("name: fixer\ndescription: from the file\ntools: Read"))
  await writeFile(join(dir.path, "elsewhere.md"), file("name: linked\ndescription: x\ntools: Read"))
  await symlink(join(dir.path, "elsewhere.md"), join(agents, "linked.md"))
  expect((await run(["mkfifo", join(agents, "pipe.md")])).code).toBe(0)
  const config = ConfigSchema.parse({
    version: 1,
    roles: { fixer: { prompt: "/nowhere.md", profile: "write", description: "from config" } },
  })
  const catalog = await listRoles(config, dir.path)
  expect(catalog.roles.map((role) => [role.name, role.description])).toEqual([["fixer", "from config"]])
  expect(catalog.refused.map((role) => [role.name, role.reason])).toEqual([
    ["linked", "it is a symbolic link, not a file"],
    ["pipe", "it is not a regular file"],
  ])
  // Control: with the person's subagents off, none of them is read.
  const off = await listRoles({ ...config, claudeAgents: { user: false, workspaces: [] } }, dir.path)
  expect(off.refused).toEqual([])
})

test("config.json: a role names exactly one prompt source, and no built-in's name", () => {
  const parse = (roles: unknown) => ConfigSchema.safeParse({ version: 1, roles }).success
  expect(parse({ a: { agent: "x", profile: "read-only", description: "d" } })).toBe(true)
  expect(parse({ a: { agent: "x", prompt: "/p.md", profile: "read-only", description: "d" } })).toBe(false)
  expect(parse({ a: { profile: "read-only", description: "d" } })).toBe(false)
  expect(parse({ worker: { agent: "x", profile: "write", description: "d" } })).toBe(false)
  expect(parse({ a: { agent: "x", profile: "admin", description: "d" } })).toBe(false)
})
