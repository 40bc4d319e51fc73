// What the Codex end-to-end files share: the real `codex` CLI, the scripted model as the user's Codex
// provider (its Responses API), our compiled binary as Codex's stdio MCP server, and one `codex exec`
// turn whose parent model plays a given script.
import { mkdir } from "node:fs/promises"
import type { Env } from "../../src/config/flags"
import type { ScriptInput } from "../../src/model/script"
import { alive, run } from "../../src/util/process"
import { processesOf } from "../helpers/leftovers"
import { until } from "../helpers/until"
import { BINARY, ROOT } from "../helpers/mcp"
import { type RepoSetup, type RepoWorld, repoWorld } from "./_world"

export const CODEX = `${ROOT}/node_modules/.bin/codex`

/** Codex names an MCP server's tools `mcp__SERVER__TOOL`, the server's name with `-` as `_`. */
export const TOOL = (name: string) => `mcp__opencode_agents__${name}`

/** A user's config.toml lines for a Codex whose model is the scripted one (Codex 0.171 needs `responses`). */
export const scriptedProvider = (modelUrl: string) => [
  'model = "fast"',
  'model_provider = "scripted"',
  "[model_providers.scripted]",
  'name = "scripted"',
  `base_url = "${modelUrl}"`,
  'env_key = "SCRIPTED_KEY"',
  'wire_api = "responses"',
]

/** Our server's table, as a user registers it by hand. */
export const ourServer = (toolTimeoutS: number) => [
  "[mcp_servers.opencode-agents]",
  `command = "${BINARY}"`,
  'args = ["serve"]',
  `tool_timeout_sec = ${toolTimeoutS}`,
]

/** The OpenCode session of a worker that writes `content` to `filePath` and says so. */
export const writing = (filePath: string, content: string): ScriptInput => ({
  turns: [{ steps: [{ tool: "write", args: { filePath, content } }, { text: `Wrote ${filePath}.` }] }],
})

export interface CodexWorld extends RepoWorld {
  /** Codex's CODEX_HOME, in the isolated home. */
  codexHome: string
}

/** A file's world (./_world.ts) with a Codex home whose config.toml holds `config`'s lines for the model's URL. */
export function codexWorld(setup: RepoSetup & { config: (modelUrl: string) => string[] }): CodexWorld {
  return repoWorld({ prefix: "oc-orch-codex-repo-", timeoutMs: 60_000, ...setup }, async ({ home, model }) => {
    const codexHome = `${home.root}/.codex`
    await mkdir(codexHome, { recursive: true })
    await Bun.write(`${codexHome}/config.toml`, `${setup.config(model.url).join("\n")}\n`)
    return { codexHome }
  })
}

export type Steps = ScriptInput["turns"][number]["steps"]

/** What a `codex exec` run adds: flags that go first, and variables that join Codex's environment. */
export interface ExecOptions {
  flags?: string[]
  env?: Env
}

/** One `codex exec` in the repository, its parent model playing `steps` as script `name`. */
export function codexExec(world: CodexWorld, name: string, steps: Steps, { flags = [], env = {} }: ExecOptions = {}) {
  world.model.reset()
  world.model.setScript(name, { turns: [{ steps }] })
  return run([CODEX, "exec", "--skip-git-repo-check", ...flags, `Delegate this. [script:${name}]`], {
    cwd: world.repo,
    // Only stops the wait: a run that follows a 75 s session on a loaded machine takes minutes.
    timeoutMs: 280_000,
    env: { ...world.home.env, CODEX_HOME: world.codexHome, SCRIPTED_KEY: "sk-scripted", ...env },
  })
}

/** Our structured result, as Codex's model received it (after Codex's `Output:` line), or {} if none. */
export function received(output: string | undefined): Record<string, unknown> {
  const start = output?.indexOf("{") ?? -1
  try {
    return start < 0 ? {} : (JSON.parse(output?.slice(start) ?? "") as Record<string, unknown>)
  } catch {
    return {}
  }
}

/**
 * One `codex exec` turn whose parent script calls `tool` with `args`, then answers with what it got: the run, the
 * parent's Responses requests, the call's output as Codex's model received it, and our result in it.
 */
export async function codexCall(
  world: CodexWorld,
  name: string,
  tool: string,
  args: Record<string, unknown>,
  options: ExecOptions = {},
) {
  const steps = [{ tool, args }, { text: "Parent got: {{lastToolOutput}}" }]
  const result = await codexExec(world, name, steps, options)
  const parent = world.model.requests.filter((r) => r.api === "responses")
  // The request after the call: the one whose conversation holds the call's output.
  const output = world.model.toolResults().find((r) => r.tool === tool)
  return { result, parent, output, got: received(output?.output) }
}

/**
 * Stops what Codex left running from `codexHome`: its interactive TUI starts an app-server daemon (installed under
 * CODEX_HOME/packages) that outlives the terminal, and keeps our `serve` (and through it an OpenCode server) open.
 * Found among the isolated home's processes by the executable's path, stopped by PID.
 */
export async function stopCodexDaemons(world: CodexWorld): Promise<void> {
  const daemons = (await processesOf(world.home.root))
    .filter(({ command }) => command.startsWith(`${world.codexHome}/`))
    .map(({ pid }) => pid)
  for (const pid of daemons) process.kill(pid, "SIGKILL")
  await until(async () => !daemons.some(alive), 10_000)
}
