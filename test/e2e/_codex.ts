// What the Codex end-to-end files share: the real `codex` CLI, the scripted model as the user's Codex
// provider (its Responses API), our compiled binary as Codex's stdio MCP server, and one `codex exec`
// turn whose parent model plays a given script.
import type { IsolatedHome } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import type { ScriptedModel } from "../../src/model/server"
import { run } from "../../src/util/process"
import { BINARY, ROOT } from "../helpers/mcp"

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

type Steps = ScriptInput["turns"][number]["steps"]

/** One `codex exec` in `cwd` whose parent model plays `steps` as script `name`; `options` go before the prompt. */
export function codexExec(
  world: { model: ScriptedModel; home: IsolatedHome; codexHome: string; cwd: string },
  name: string,
  steps: Steps,
  options: string[] = [],
) {
  world.model.reset()
  world.model.setScript(name, { turns: [{ steps }] })
  return run([CODEX, "exec", "--skip-git-repo-check", ...options, `Delegate this. [script:${name}]`], {
    cwd: world.cwd,
    timeoutMs: 150_000,
    env: { ...world.home.env, CODEX_HOME: world.codexHome, SCRIPTED_KEY: "sk-scripted" },
  })
}
