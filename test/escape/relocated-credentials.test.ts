// Credential stores under a moved XDG_CONFIG_HOME, attacked through the real OpenCode on the scripted
// model: every `.config` entry of the one credential list follows the base, so a delegation (or a session
// started there directly, the plugin alone) into any of them reads nothing; a plain directory beside
// them is read, which shows the attack is real.
import { beforeAll, describe, expect, test } from "bun:test"
import { mkdir, writeFile } from "node:fs/promises"
import { admitWorkspace, hostContext, hostFs, OPEN_POLICY } from "../../src/sandbox"
import { HOME_CREDENTIALS } from "../../src/sandbox/host-paths"
import { battery, runAgent, structuredOf, textOf } from "./_world"

const SCOUT = "opencode-orchestrator-scout"
const SECRET = "MOVED-CONFIG-SECRET-91c2"
const done = { text: "report: {{toolOutputs}}" }
const shellCat = { tool: "sandbox_shell", args: { command: "cat secret.txt" } }

/** Each `.config` credential entry, as a directory under the moved base holding a secret. */
const stores = HOME_CREDENTIALS.filter((entry) => entry.startsWith(".config/")).map((entry) => entry.slice(8))

const { world, mcp } = battery(
  {
    cat_secret: {
      turns: [{ steps: [{ tool: "read", args: { filePath: "secret.txt" } }, shellCat, done] }],
    },
  },
  { configDir: "moved-config" },
)
let moved: string

beforeAll(async () => {
  moved = `${world.home.root}/moved-config`
  expect(world.runtime.flags.xdgConfigHome).toBe(moved)
  for (const store of [...stores, "notes"]) {
    await mkdir(`${moved}/${store}`, { recursive: true })
    await writeFile(`${moved}/${store}/secret.txt`, `${SECRET}\n`)
  }
})

describe("a moved XDG_CONFIG_HOME keeps every credential store out of the sandbox", () => {
  test("the list covers the stores that once fell through (anthropic, containers)", () => {
    expect(stores).toEqual(expect.arrayContaining(["anthropic", "containers", "gcloud", "gh", "git", "opencode"]))
  })

  test.each(stores)("the front door refuses %s under the moved base before any session", async (store) => {
    const requests = world.model.stepRequests().length
    const result = await mcp.call("scout", { cwd: `${moved}/${store}`, task: "[script:cat_secret] read" })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/^Refusing workspace .*: it (is inside|contains) the credential store/m)
    expect(textOf(result)).toContain("next: ")
    expect(textOf(result)).not.toContain(SECRET)
    expect(world.model.stepRequests().length).toBe(requests)
  })

  test.each(stores)("the plugin on its own: a session started in %s reads nothing", async (store) => {
    const { results } = await runAgent(world, SCOUT, `${moved}/${store}`, "cat_secret")
    expect(results.map((r) => r.tool)).toEqual(["read", "sandbox_shell"])
    for (const result of results) {
      expect(result.output).not.toContain(SECRET)
      expect(result.output).toMatch(/Refusing workspace|outside the workspace/)
    }
  })

  test("control: a plain directory beside them is admitted and its file is read", async () => {
    const result = await mcp.call("scout", { cwd: `${moved}/notes`, task: "[script:cat_secret] read" })
    expect(structuredOf(result).status).toBe("succeeded")
    expect(textOf(result)).toContain(SECRET)
    const { results } = await runAgent(world, SCOUT, `${moved}/notes`, "cat_secret")
    expect(results.map((r) => r.output.includes(SECRET))).toEqual([true, true])
  })

  test("control: with the HOME spellings alone (no relocation), the moved stores would be admitted", () => {
    const host = { ...hostContext(world.runtime.flags), credentials: [] }
    for (const store of ["anthropic", "containers"])
      expect(admitWorkspace(`${moved}/${store}`, host, OPEN_POLICY, hostFs)).toBe(`${moved}/${store}`)
  })
})
