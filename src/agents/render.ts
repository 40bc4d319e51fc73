// Renders the OpenCode agent definitions from the config: one markdown file per agent with
// frontmatter (model, variant, steps, permissions) and the role's prompt with its budget stated.
import scoutPrompt from "../templates/agents/scout.md" with { type: "text" }
import workerPrompt from "../templates/agents/worker.md" with { type: "text" }
import runnerPrompt from "../templates/agents/runner.md" with { type: "text" }
import { reserveSteps, roleModels, stepLimits, type Config, type Role } from "../config/schema"
import { agentName, LOG_TOOLS, RUNNER_TOOLS, runnerAgentName, SANDBOX_TOOLS } from "./names"

export interface AgentFile {
  name: string
  /** File name under OpenCode's agents directory. */
  file: string
  role: Role
  steps: number
  content: string
}

type Action = "allow" | "ask" | "deny"
type Rules = Record<string, Action | Record<string, Action>>

// Every built-in permission is stated: a default of `ask` would hang a headless run (OpenCode 1.18 defaults
// external_directory and doom_loop to ask); only
// relayRules turns one into `ask`, and only for an ask the person may answer.
const LOCKED: Rules = {
  edit: "deny",
  bash: "deny",
  task: "deny",
  external_directory: "deny",
  todowrite: "allow",
  question: "deny",
  webfetch: "deny",
  websearch: "deny",
  lsp: "deny",
  doom_loop: "deny",
  skill: "deny",
  read: "allow",
  glob: "allow",
  grep: "allow",
  list: "allow",
}

/**
 * The asks config.json lets the person answer (policy.relay): the question tool is offered (asking is
 * its whole job), webfetch and websearch ask each time. Without a relay at run time the ask is refused
 * (src/opencode/policy.ts), so "ask" never hangs a headless run.
 */
function relayRules(config: Config): Rules {
  return Object.fromEntries(config.policy.relay.map((ask) => [ask, ask === "question" ? "allow" : "ask"]))
}

function sandboxRules(allowed: string[]): Rules {
  return Object.fromEntries(SANDBOX_TOOLS.map((tool) => [tool, allowed.includes(tool) ? "allow" : "deny"]))
}

const GIT_DENIED: Record<string, Action> = {
  "*": "allow",
  ".git": "deny",
  ".git/*": "deny",
  "**/.git": "deny",
  "**/.git/*": "deny",
}

export function fill(template: string, values: Record<string, string | number | boolean>): string {
  return template
    .replace(/\{\{#(\w+)\}\}([\s\S]*?)\{\{\/\1\}\}/g, (_, key: string, inner: string) => (values[key] ? inner : ""))
    .replace(/\{\{(\w+)\}\}/g, (whole, key: string) => (key in values ? String(values[key]) : whole))
}

function yamlValue(value: unknown, indent: string): string {
  if (value && typeof value === "object")
    return Object.entries(value)
      .map(
        ([key, inner]) =>
          `\n${indent}${JSON.stringify(key)}:${typeof inner === "object" ? "" : " "}${yamlValue(inner, `${indent}  `)}`,
      )
      .join("")
  return JSON.stringify(value)
}

function document(front: Record<string, unknown>, body: string): string {
  const lines = Object.entries(front)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}:${typeof value === "object" ? "" : " "}${yamlValue(value, "  ")}`)
  return `---\n${lines.join("\n")}\n---\n\n${body.trim()}\n`
}

function agent(
  config: Config,
  role: Role,
  name: string,
  description: string,
  rules: Rules,
  prompt: string,
  extra: Record<string, string | boolean> = {},
): AgentFile {
  const steps = stepLimits(config)[role]
  const permission = { ...rules, ...relayRules(config) }
  const reserve = reserveSteps(steps)
  const body = fill(prompt, { steps, reserve, lastWorkStep: steps - reserve, shell: true, ...extra })
  const front = {
    description,
    mode: "subagent",
    hidden: true,
    // A route list renders its first model; the others are tried by the engine (lifecycle.ts).
    model: roleModels(config, role)[0],
    variant: config.modelVariants[role],
    steps,
    permission,
  }
  return { name, file: `${name}.md`, role, steps, content: document(front, body) }
}

/** The full set of managed agent files for a config, in a stable order. */
export function renderAgents(config: Config): AgentFile[] {
  const files = [
    agent(
      config,
      "scout",
      agentName("scout"),
      "Read-only repository investigation for a parent agent (opencode-mcp-orchestrator).",
      { ...LOCKED, ...sandboxRules(["sandbox_shell"]) },
      scoutPrompt,
    ),
    agent(
      config,
      "worker",
      agentName("worker"),
      "Bounded implementation in a workspace for a parent agent (opencode-mcp-orchestrator).",
      { ...LOCKED, edit: GIT_DENIED, ...sandboxRules(["sandbox_shell"]) },
      workerPrompt,
    ),
  ]
  for (const access of ["read_only", "writable"] as const)
    for (const network of ["disabled", "host"] as const) {
      const tool = RUNNER_TOOLS[access][network]
      files.push(
        agent(
          config,
          "runner",
          runnerAgentName(access, network),
          `Runs one command and analyses its output (${access}, network ${network}) for a parent agent ` +
            `(opencode-mcp-orchestrator).`,
          { ...LOCKED, ...sandboxRules([tool, ...LOG_TOOLS]) },
          runnerPrompt,
          {
            runTool: tool,
            access: access === "writable" ? "the workspace is writable" : "the workspace is read-only",
            network: network === "host" ? "shared with the host" : "disabled",
          },
        ),
      )
    }
  return files
}
