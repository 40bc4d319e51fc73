// What the print-mode Claude Code files share: the real `claude -p` (offline on the scripted Anthropic API)
// in the isolated home, with the compiled binary as its stdio MCP server `orch`, and one turn whose parent
// model plays the script `parent`.
import { mkdir } from "node:fs/promises"
import { writeJson } from "../../src/util/fs"
import { run } from "../../src/util/process"
import { ROOT } from "../helpers/mcp"
import { type RepoSetup, type RepoWorld, repoWorld } from "./_world"

const CLAUDE = `${ROOT}/node_modules/.bin/claude`

/** How Claude Code starts our server. */
export interface StdioServer {
  command: string
  args: string[]
}

/**
 * A file's world (./_world.ts) with Claude Code's config dir and an MCP config naming `server` as `orch`.
 * Claude Code starts the server with its own environment, which is the isolated home's.
 */
export function claudeWorld(setup: RepoSetup & { server: (world: RepoWorld) => Promise<StdioServer> }): RepoWorld {
  return repoWorld(setup, async (world) => {
    await mkdir(`${world.home.root}/.claude`, { recursive: true })
    const server = await setup.server(world)
    await writeJson(`${world.home.root}/mcp.json`, { mcpServers: { orch: { type: "stdio", ...server } } })
    return {}
  })
}

/** One `claude -p` turn in the repository that may call our scout; `args` follow the others, `env` reaches it. */
export function claudePrint(world: RepoWorld, args: string[] = [], env: Record<string, string> = {}) {
  world.model.reset()
  const argv = [CLAUDE, "-p", "Ask the scout. [script:parent]", "--model", "fast", "--mcp-config"]
  return run(
    [...argv, `${world.home.root}/mcp.json`, "--strict-mcp-config", "--allowedTools", "mcp__orch__scout", ...args],
    {
      cwd: world.repo,
      timeoutMs: 90_000,
      env: {
        ...world.home.env,
        CLAUDE_CONFIG_DIR: `${world.home.root}/.claude`,
        ANTHROPIC_BASE_URL: world.model.origin,
        ANTHROPIC_API_KEY: "sk-scripted",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        // MCP tools are offered to the model directly, not behind ToolSearch.
        ENABLE_TOOL_SEARCH: "false",
        ...env,
      },
    },
  )
}
