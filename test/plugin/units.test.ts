// The plugin's small pure pieces: its agent table agrees with the rendered agents, config's trusted
// roots are read through the zod schema (fail closed), arguments are validated, shell output is capped with notes,
// the runner brief carries the command verbatim, and Muse Spark's reasoning is left out for our
// agents only.
import { describe, expect, test } from "bun:test"
import { configSliceOf } from "../../plugin/env"
import {
  isOrchestratorAgent,
  isRunnerAgent,
  RUNNER_TOOL_SPECS,
  runnerProfile,
  SHELL_PROFILES,
  shellProfile,
  type RunnerTool,
} from "../../plugin/roles"
import { isMuseSpark, omitHiddenReasoning } from "../../plugin/quirks"
import { runnerTool } from "../../plugin/runner"
import type { ChatMessage } from "../../plugin/types"
import { shellOutput, shellTool } from "../../plugin/shell"
import { agentName, RUNNER_TOOLS, runnerAgentName } from "../../src/agents/names"
import { renderAgents } from "../../src/agents/render"
import { ConfigSchema } from "../../src/config/schema"
import { runnerBrief } from "../../src/runner/brief"
import type { SandboxRunResult } from "../../src/sandbox"

test("the plugin's agent table is the one src/agents renders", () => {
  const rendered = renderAgents(ConfigSchema.parse({ version: 1 }))
  const allowed = (name: string) => {
    const content = rendered.find((agent) => agent.name === name)?.content ?? ""
    return [...content.matchAll(/\n {2}"(sandbox_\w+)": "allow"/g)].map((match) => match[1])
  }
  const tableAgents = [...Object.values(RUNNER_TOOL_SPECS).map((spec) => spec.agent), ...Object.keys(SHELL_PROFILES)]
  expect(tableAgents.sort()).toEqual(rendered.map((agent) => agent.name).sort())
  for (const agent of tableAgents) expect(isOrchestratorAgent(agent)).toBe(true)
  for (const [tool, spec] of Object.entries(RUNNER_TOOL_SPECS)) {
    expect(allowed(spec.agent)).toContain(tool)
    expect(allowed(spec.agent).filter((name) => name?.startsWith("sandbox_run"))).toEqual([tool])
  }
  for (const access of ["read_only", "writable"] as const)
    for (const network of ["disabled", "host"] as const) {
      const spec = RUNNER_TOOL_SPECS[RUNNER_TOOLS[access][network] as RunnerTool]
      expect(spec.agent).toBe(runnerAgentName(access, network))
      expect(spec.profile).toEqual({ kind: "runner", workspace: access, network })
    }
  for (const agent of Object.keys(SHELL_PROFILES)) expect(allowed(agent)).toEqual(["sandbox_shell"])
  expect(Object.keys(SHELL_PROFILES).sort()).toEqual([agentName("scout"), agentName("worker")])
})

test("each tool refuses every agent but its own", () => {
  expect(shellProfile(agentName("scout"))).toEqual({ kind: "scout" })
  expect(shellProfile(agentName("worker"))).toEqual({ kind: "worker" })
  expect(() => shellProfile(runnerAgentName("writable", "host"))).toThrow(
    "only for the orchestrator's scout and worker",
  )
  expect(() => shellProfile("build")).toThrow('not "build"')
  expect(() => runnerProfile("sandbox_run_network", runnerAgentName("writable", "disabled"))).toThrow(
    "only for the agent opencode-orchestrator-runner-writable-network",
  )
  expect(isRunnerAgent(agentName("scout"))).toBe(false)
  expect(isRunnerAgent(runnerAgentName("read_only", "host"))).toBe(true)
})

describe("trusted roots from config.json", () => {
  const trustedRootsOf = (raw: unknown, file: string) => configSliceOf(raw, file).trustedRoots
  test.each([
    ["no sandboxRuntime", { version: 1 }, []],
    ["no trustedRoots", { version: 1, sandboxRuntime: {} }, []],
    [
      "a full entry",
      {
        version: 1,
        sandboxRuntime: { trustedRoots: [{ root: "/opt/rt", pathEntries: ["bin"], environment: { RT_HOME: "." } }] },
      },
      [{ root: "/opt/rt", pathEntries: ["bin"], environment: { RT_HOME: "." } }],
    ],
  ] as const)("accepted: %s", (_, raw, roots) => {
    expect(trustedRootsOf(raw, "c.json")).toEqual(roots as never)
  })
  test.each([
    ["not an object", 3, /\(top level\): Invalid input: expected object/],
    [
      "trustedRoots not a list",
      { version: 1, sandboxRuntime: { trustedRoots: {} } },
      /sandboxRuntime\.trustedRoots: Invalid input: expected array/,
    ],
    [
      "an entry without root",
      { version: 1, sandboxRuntime: { trustedRoots: [{ pathEntries: [] }] } },
      /sandboxRuntime\.trustedRoots\.0\.root: /,
    ],
    [
      "pathEntries not strings",
      { version: 1, sandboxRuntime: { trustedRoots: [{ root: "/opt", pathEntries: [1] }] } },
      /trustedRoots\.0\.pathEntries\.0: Invalid input: expected string/,
    ],
    [
      "environment not strings",
      { version: 1, sandboxRuntime: { trustedRoots: [{ root: "/opt", environment: { A: 1 } }] } },
      /trustedRoots\.0\.environment\.A: Invalid input: expected string/,
    ],
  ] as const)("refused: %s", (_, raw, reason) => {
    expect(() => trustedRootsOf(raw, "c.json")).toThrow(reason)
  })
})

test("arguments are checked before the tools run (OpenCode does not validate plugin tool calls)", () => {
  const shell = shellTool()
  const runner = runnerTool("sandbox_run")
  expect(shell.parse({ command: "ls" })).toEqual({ command: "ls" })
  expect(() => shell.parse({})).toThrow('"command" argument is required')
  expect(() => shell.parse({ command: 3 })).toThrow("non-empty string")
  const timeoutSeconds = (value: unknown) => runner.parse({ command: "ls", timeout_seconds: value }).timeout_seconds
  expect(timeoutSeconds(undefined)).toBe(900)
  expect(timeoutSeconds(60)).toBe(60)
  expect(timeoutSeconds("120")).toBe(120)
  for (const bad of [0, 3601, 1.5, "ten", -1]) expect(() => timeoutSeconds(bad)).toThrow("from 1 to 3600")
})

const result = (over: Partial<SandboxRunResult>): SandboxRunResult => ({
  exitCode: 0,
  signal: null,
  stdout: "",
  stderr: "",
  timedOut: false,
  aborted: false,
  truncated: false,
  durationMs: 1,
  ...over,
})

test("shell output: stdout then stderr, cut at the cap, with the exit code and what happened", () => {
  expect(shellOutput(result({ stdout: "out\n", stderr: "err\n", exitCode: 2 }), 4096, 1000)).toBe(
    "out\nerr\n[exit code: 2]",
  )
  const cut = shellOutput(result({ stdout: "x".repeat(5000), truncated: true }), 4096, 1000)
  expect(cut).toContain(`${"x".repeat(4096)}\n[output cut at 4096 bytes`)
  expect(cut.length).toBeLessThan(4300)
  expect(shellOutput(result({ exitCode: null, signal: "SIGTERM", timedOut: true }), 4096, 120_000)).toBe(
    "[timed out after 120s; the command and everything it started were killed]\n[exit code: none (SIGTERM)]",
  )
  expect(
    shellOutput(
      result({
        exitCode: 1,
        failure: {
          code: "userns-restricted",
          detail: "setting up uid map: Permission denied",
          hint: "Allow user namespaces.",
        },
      }),
      4096,
      1000,
    ),
  ).toBe(
    "The sandbox could not start (userns-restricted): setting up uid map: Permission denied\nAllow user namespaces.",
  )
})

test("the runner brief carries the command verbatim in a fence it cannot close", () => {
  const brief = runnerBrief({
    command: "echo ```; bun test",
    objective: "see what fails",
    timeoutSeconds: 300,
    tool: "sandbox_run_ro",
  })
  expect(brief).toContain(
    "Run this command once with `sandbox_run_ro`, passing it exactly as written and timeout_seconds 300:",
  )
  expect(brief).toContain("````\necho ```; bun test\n````")
  expect(brief).toContain("Objective: see what fails")
  expect(brief).toContain("No expected outcome was given")
  expect(runnerBrief({ command: "make", objective: "o", expected: "builds", timeoutSeconds: 1, tool: "t" })).toContain(
    "Expected outcome: builds",
  )
})

describe("Muse Spark: hidden reasoning left out of requests", () => {
  const muse = { providerID: "opencode", modelID: "muse-spark-1-3" }
  const session = (agent: string, model: { providerID: string; modelID: string }): ChatMessage[] => [
    { info: { role: "user", agent, model }, parts: [{ type: "text" }] },
    {
      info: { role: "assistant" },
      parts: [{ type: "step-start" }, { type: "reasoning" }, { type: "tool" }, { type: "step-finish" }],
    },
    { info: { role: "assistant" }, parts: [{ type: "reasoning" }, { type: "text" }] },
  ]
  const kinds = (messages: ChatMessage[]) => messages.map((m) => m.parts.map((p) => p.type).join(","))

  test.each([
    ["scout on opencode/muse-spark-*", agentName("scout"), muse, 2],
    ["a runner on opencode/muse-spark-*", runnerAgentName("writable", "host"), muse, 2],
    ["build (not ours)", "build", muse, 0],
    ["scout on another opencode model", agentName("scout"), { providerID: "opencode", modelID: "spark-muse" }, 0],
    [
      "scout on muse-spark from another provider",
      agentName("scout"),
      { providerID: "openrouter", modelID: "muse-spark-1-3" },
      0,
    ],
  ])("%s", (_name, agent, model, omitted) => {
    const messages = session(agent, model)
    const before = kinds(messages)
    expect(omitHiddenReasoning(messages)).toBe(omitted)
    if (omitted === 0) expect(kinds(messages)).toEqual(before)
    else expect(kinds(messages)).toEqual(["text", "step-start,tool,step-finish", "text"])
  })

  test("the latest user message decides: a session switched to another agent keeps its reasoning", () => {
    const messages = [
      ...session(agentName("scout"), muse),
      { info: { role: "user", agent: "build", model: muse }, parts: [{ type: "text" }] },
    ]
    expect(omitHiddenReasoning(messages)).toBe(0)
    expect(omitHiddenReasoning(messages.slice(0, 3))).toBe(2)
    expect(isMuseSpark(undefined)).toBe(false)
  })
})
