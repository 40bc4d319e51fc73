// Registrations checked with the real clients (npm @openai/codex 0.171.0, @anthropic-ai/claude-code)
// in isolated homes: what `codex mcp` and `claude mcp` themselves report, not what we wrote.
import { describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { uninstall } from "../../src/install/uninstall"
import { run } from "../../src/util/process"
import { readFlags } from "../../src/config/flags"
import { clientHomes } from "../../src/install/homes"
import { BIN, installYes, machine, type Machine } from "./helpers"

const codex = (m: Machine, ...args: string[]) => run([`${BIN}/codex`, ...args], { env: m.env, timeoutMs: 60_000 })
const claude = (m: Machine, ...args: string[]) => run([`${BIN}/claude`, ...args], { env: m.env, timeoutMs: 60_000 })
const ours = (m: Machine) => `${m.paths.current}/bin/opencode-mcp-orchestrator`

const USER_TOML = `# my Codex settings
model = "o3"  # keep this comment

[mcp_servers.github]
command = "/usr/local/bin/github-mcp"
args = ["stdio"]
# trailing comment of github
`

async function codexServers(
  m: Machine,
): Promise<Array<{ name: string; transport: { command: string; args: string[] }; tool_timeout_sec: number | null }>> {
  const listed = await codex(m, "mcp", "list", "--json")
  expect(listed.code).toBe(0)
  return JSON.parse(listed.stdout)
}

describe("real clients in isolated homes", () => {
  test("install --yes: codex and claude list opencode-agents pointing at current/, with the parent deadline", async () => {
    using m = machine()
    m.write(`${m.env.CODEX_HOME}/config.toml`, USER_TOML)
    const { code } = await installYes(m, { integrations: "codex,claude", timeouts: "extended" })
    expect(code).toBe(0)

    const servers = await codexServers(m)
    const entry = servers.find((s) => s.name === "opencode-agents")
    expect(entry?.transport).toMatchObject({ command: ours(m), args: ["serve"] })
    expect(entry?.tool_timeout_sec).toBe(2100)
    expect(servers.map((s) => s.name).sort()).toEqual(["github", "opencode-agents"])
    const toml = await Bun.file(`${m.env.CODEX_HOME}/config.toml`).text()
    expect(toml.startsWith(USER_TOML)).toBe(true)

    const listed = await claude(m, "mcp", "list")
    expect(listed.stdout).toContain(`opencode-agents: ${ours(m)} serve`)
    const claudeJson = await Bun.file(`${m.env.CLAUDE_CONFIG_DIR}/.claude.json`).json()
    expect(claudeJson.mcpServers["opencode-agents"]).toEqual({
      type: "stdio",
      command: ours(m),
      args: ["serve"],
      timeout: 2_100_000,
    })

    // Codex sees the skill where it looks for user skills.
    const prompt = await codex(m, "debug", "prompt-input", "hello")
    expect(prompt.stdout).toContain("orchestrate: Delegate bounded coding work")
  }, 120_000)

  test("rerunning is idempotent; switching from codex to claude removes only ours, byte for byte", async () => {
    using m = machine()
    m.write(`${m.env.CODEX_HOME}/config.toml`, USER_TOML)
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    const afterFirst = await Bun.file(`${m.env.CODEX_HOME}/config.toml`).text()
    const again = await installYes(m, { integrations: "codex" })
    expect(again.lines).toContain("  keep     Codex MCP server opencode-agents (already registered)")
    expect(await Bun.file(`${m.env.CODEX_HOME}/config.toml`).text()).toBe(afterFirst)

    const switched = await installYes(m, { integrations: "claude" })
    expect(switched.code).toBe(0)
    expect(switched.lines).toContain("Deselected integrations will be removed: Codex.")
    expect(await Bun.file(`${m.env.CODEX_HOME}/config.toml`).text()).toBe(USER_TOML)
    expect((await codexServers(m)).map((s) => s.name)).toEqual(["github"])
    expect(existsSync(`${m.home}/.agents/skills/orchestrate/SKILL.md`)).toBe(false)
    expect((await claude(m, "mcp", "get", "opencode-agents")).stdout).toContain(ours(m))
  }, 120_000)

  test("uninstall removes our registrations and files, leaves a user-modified skill and says so", async () => {
    using m = machine()
    expect((await installYes(m, { integrations: "codex,claude" })).code).toBe(0)
    const skill = `${m.env.CLAUDE_CONFIG_DIR}/skills/orchestrate/SKILL.md`
    m.write(skill, "my own orchestrate notes\n")
    const lines: string[] = []
    const flags = readFlags(m.env)
    expect(
      await uninstall({ paths: m.paths, homes: clientHomes(flags), env: m.env, run, print: (l) => lines.push(l) }, {}),
    ).toBe(0)
    expect(lines.join("\n")).toMatch(
      /LEAVE +~\/\.claude\/skills\/orchestrate\/SKILL\.md: modified since it was installed/,
    )
    expect(await Bun.file(skill).text()).toBe("my own orchestrate notes\n")
    expect(existsSync(`${m.home}/.agents/skills/orchestrate/SKILL.md`)).toBe(false)
    expect(existsSync(m.paths.current)).toBe(false)
    expect(existsSync(m.paths.opencodePluginFile)).toBe(false)
    expect(existsSync(m.paths.configFile)).toBe(true)
    expect((await codexServers(m)).map((s) => s.name)).toEqual([])
    expect((await claude(m, "mcp", "list")).stdout).not.toContain("opencode-agents")
  }, 120_000)
})
