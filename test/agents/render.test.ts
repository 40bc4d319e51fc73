// The rendered agent files: budgets stated in the prompt, every permission explicit (an `ask` would
// hang a headless run), each sandbox tool allowed exactly where its role needs it.
import { describe, expect, test } from "bun:test"
import { ConfigSchema } from "../../src/config/schema"
import { LOG_TOOLS, SANDBOX_TOOLS } from "../../src/agents/names"
import { renderAgents } from "../../src/agents/render"

const render = (input: Record<string, unknown> = {}) => renderAgents(ConfigSchema.parse({ version: 1, ...input }))
const byName = (input: Record<string, unknown> = {}) =>
  Object.fromEntries(render(input).map((agent) => [agent.name, agent]))

describe("budgets", () => {
  test.each([
    ["standard", undefined, { scout: [16, 4, 12], worker: [32, 7, 25], runner: [40, 8, 32] }],
    ["extended", { profile: "extended" }, { scout: [32, 7, 25], worker: [48, 10, 38], runner: [64, 13, 51] }],
    [
      "custom",
      { profile: "custom", scout: 4, worker: 10, runner: 256 },
      { scout: [4, 2, 2], worker: [10, 2, 8], runner: [256, 52, 204] },
    ],
  ] as const)(
    "%s profile: steps in frontmatter, reserve (20%%, at least 2) in the prompt",
    (_, stepLimits, expected) => {
      for (const agent of render(stepLimits ? { stepLimits } : {})) {
        const [steps, reserve, lastWork] = expected[agent.role]
        expect(agent.content).toContain(`\nsteps: ${steps}\n`)
        expect(agent.content).toContain(`at most ${steps} steps`)
        expect(agent.content).toContain(`the last ${reserve} steps are reserved`)
        expect(agent.content.replace(/\s+/g, " ")).toContain(`step ${lastWork} at the latest`)
      }
    },
  )
})

describe("permissions", () => {
  const agents = byName()
  const allowed = (name: string, tool: string) => new RegExp(`\\n  "${tool}": "allow"`).test(agents[name]!.content)

  test("six agents, none with an ask (the default relays nothing)", () => {
    expect(Object.keys(agents)).toHaveLength(6)
    for (const agent of Object.values(agents)) expect(agent.content).not.toContain('"ask"')
  })

  test.each([
    ["opencode-orchestrator-scout", ["sandbox_shell"]],
    ["opencode-orchestrator-worker", ["sandbox_shell"]],
    ["opencode-orchestrator-runner", ["sandbox_run_ro", ...LOG_TOOLS]],
    ["opencode-orchestrator-runner-writable", ["sandbox_run", ...LOG_TOOLS]],
    ["opencode-orchestrator-runner-network", ["sandbox_run_network_ro", ...LOG_TOOLS]],
    ["opencode-orchestrator-runner-writable-network", ["sandbox_run_network", ...LOG_TOOLS]],
  ])("%s may use exactly %p of the sandbox tools, and never the built-in bash", (name, tools) => {
    for (const tool of SANDBOX_TOOLS) expect([tool, allowed(name, tool)]).toEqual([tool, tools.includes(tool)])
    expect(agents[name]!.content).toContain('"bash": "deny"')
    expect(agents[name]!.content).toContain('"external_directory": "deny"')
    expect(agents[name]!.content).toContain('"question": "deny"')
  })

  test("policy.relay: question is offered, webfetch and websearch ask, in every agent; bash and the sandbox tools do not move", () => {
    const relayed = byName({ policy: { relay: ["question", "webfetch", "websearch"] } })
    for (const [name, agent] of Object.entries(relayed)) {
      expect(agent.content).toContain('"question": "allow"')
      expect(agent.content).toContain('"webfetch": "ask"')
      expect(agent.content).toContain('"websearch": "ask"')
      expect(agent.content).toContain('"bash": "deny"')
      expect(agent.content.match(/"ask"/g)).toHaveLength(2)
      const others = (content: string) => content.replace(/\n {2}"(question|webfetch|websearch)": "\w+"/g, "")
      expect(others(agent.content)).toBe(others(agents[name]!.content))
    }
    const webfetchOnly = byName({ policy: { relay: ["webfetch"] } })["opencode-orchestrator-scout"]!.content
    expect(webfetchOnly).toContain('"question": "deny"')
    expect(webfetchOnly).toContain('"webfetch": "ask"')
    expect(webfetchOnly).toContain('"websearch": "deny"')
  })

  test("only the worker edits, and never git metadata", () => {
    for (const [name, agent] of Object.entries(agents)) {
      if (name.endsWith("-worker")) {
        expect(agent.content).toContain('"edit":\n    "*": "allow"')
        for (const pattern of [".git", ".git/*", "**/.git", "**/.git/*"])
          expect(agent.content).toContain(`"${pattern}": "deny"`)
      } else expect(agent.content).toContain('"edit": "deny"')
    }
  })
})

test("model and variant per role appear only when configured", () => {
  const agents = byName({ models: { worker: "p/w", runner: "p/r" }, modelVariants: { runner: "low" } })
  expect(agents["opencode-orchestrator-scout"]!.content).not.toContain("\nmodel:")
  expect(agents["opencode-orchestrator-worker"]!.content).toContain('\nmodel: "p/w"\n')
  expect(agents["opencode-orchestrator-worker"]!.content).not.toContain("\nvariant:")
  expect(agents["opencode-orchestrator-runner-network"]!.content).toContain('\nmodel: "p/r"\nvariant: "low"\n')
})
