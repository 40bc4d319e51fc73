// The instructions a parent reads when it connects name the person's roles, one line each, from the compiled
// `serve`: config.json's and the person's own Claude Code subagents, with the tool that runs each; a long
// description is cut, and past twenty the policy tool is named for the rest. Control: a home with no role
// gets the instructions without the section.
import { afterEach, expect, test } from "bun:test"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { connectStdio, TEST_PATH, type Connected } from "../helpers/mcp"
import { tempDir } from "../helpers/temp"

const opened: Connected[] = []
afterEach(async () => {
  for (const connection of opened.splice(0)) await connection.close()
})

async function instructionsIn(home: string): Promise<string> {
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_STATE_HOME: join(home, ".state"),
    PATH: TEST_PATH,
  }
  const connection = await connectStdio(env)
  opened.push(connection)
  return connection.client.getInstructions() ?? ""
}

const subagent = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntools: Read, Grep\n---\nLook.\n`

test("config.json's roles and the person's subagents are named with their tools; a long description is cut", async () => {
  await using home = await tempDir("oc-orch-role-lines-")
  await mkdir(join(home.path, ".config", "opencode-mcp-orchestrator"), { recursive: true })
  await writeFile(
    join(home.path, ".config", "opencode-mcp-orchestrator", "config.json"),
    JSON.stringify({
      version: 1,
      roles: { fixer: { prompt: "/p.md", profile: "write", description: "Small exact fixes" } },
    }),
  )
  await mkdir(join(home.path, ".claude", "agents"), { recursive: true })
  await writeFile(join(home.path, ".claude", "agents", "reader.md"), subagent("reader", "x".repeat(5000)))
  const text = await instructionsIn(home.path)
  expect(text).toContain("Roles the person defined")
  expect(text).toContain("- `fixer` (worker): Small exact fixes")
  const reader = text.split("\n").find((line) => line.startsWith("- `reader` (scout): "))
  expect(reader).toBeDefined()
  expect(reader!.length).toBeLessThan(160)
}, 60_000)

test("past twenty roles the rest are counted and the policy tool named", async () => {
  await using home = await tempDir("oc-orch-role-lines-")
  await mkdir(join(home.path, ".claude", "agents"), { recursive: true })
  for (let i = 0; i < 25; i++)
    await writeFile(join(home.path, ".claude", "agents", `r${i}.md`), subagent(`r${i}`, `role ${i}`))
  const text = await instructionsIn(home.path)
  expect(text.split("\n").filter((line) => line.startsWith("- `r"))).toHaveLength(20)
  expect(text).toContain("- and 5 more: `policy` lists them.")
}, 60_000)

test("control: a home with no role of its own gets no roles section", async () => {
  await using home = await tempDir("oc-orch-role-lines-")
  const text = await instructionsIn(home.path)
  expect(text).toContain("Delegates bounded work")
  expect(text).not.toContain("Roles the person defined")
}, 60_000)
