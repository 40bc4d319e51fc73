// Claude Code keeps user-scoped MCP servers in `.claude.json` (under CLAUDE_CONFIG_DIR, else HOME).
// We register and remove through its own CLI (`claude mcp add-json --scope user`, `claude mcp
// remove --scope user`) and only read the file. Its per-server `timeout` is in milliseconds
// ("Per-server tool-call timeout in milliseconds", Claude Code 2.1.332's schema). `alwaysLoad: true`
// (same schema) offers the server's tools to the model up front rather than behind tool search; we
// write it only when the user asks (`install --claude-always-load`) or the entry already had it.
import { fail } from "../../errors"
import { readJsonFile } from "../../util/fs"
import type { Run, RunResult } from "../../util/process"
import { SERVER_NAME } from "../../version"
import type { McpEntry } from "./codex"

export interface ClaudeEntry {
  type?: unknown
  command?: unknown
  args?: unknown
  timeout?: unknown
  alwaysLoad?: unknown
}

const claudeServer = (entry: McpEntry) => ({
  type: "stdio",
  command: entry.command,
  args: entry.args,
  timeout: entry.timeoutSec * 1000,
  ...(entry.alwaysLoad ? { alwaysLoad: true } : {}),
})

export async function readClaudeEntry(file: string): Promise<ClaudeEntry | undefined> {
  const doc = await readJsonFile(
    file,
    "Install",
    `Let Claude Code repair ${file} (run \`claude\` once) or fix it by hand, then rerun the command.`,
  )
  if (typeof doc !== "object" || doc === null || !("mcpServers" in doc)) return undefined
  const servers = doc.mcpServers
  if (typeof servers !== "object" || servers === null || !(SERVER_NAME in servers)) return undefined
  const entry: unknown = (servers as Record<string, unknown>)[SERVER_NAME]
  return typeof entry === "object" && entry !== null ? (entry as ClaudeEntry) : undefined
}

export const claudeMatches = (found: ClaudeEntry | undefined, entry: McpEntry) =>
  found !== undefined &&
  found.command === entry.command &&
  Bun.deepEquals(found.args, entry.args) &&
  found.timeout === entry.timeoutSec * 1000 &&
  (found.alwaysLoad === true) === (entry.alwaysLoad === true)

function check(result: RunResult, what: string): void {
  if (result.code === 0) return
  const output = (result.stderr || result.stdout).trim().split("\n").slice(-3).join(" ")
  throw fail(
    "Install",
    `\`claude ${what}\` failed (exit ${result.code}): ${output}`,
    "Run the same `claude mcp` command by hand to see why, fix it, then rerun install.",
  )
}

export async function registerClaude(
  run: Run,
  claude: string,
  entry: McpEntry,
  env: Record<string, string | undefined>,
): Promise<void> {
  // add-json refuses an existing name, so an outdated entry is removed first.
  await run([claude, "mcp", "remove", "--scope", "user", SERVER_NAME], { env, timeoutMs: 60_000 })
  const added = await run(
    [claude, "mcp", "add-json", "--scope", "user", SERVER_NAME, JSON.stringify(claudeServer(entry))],
    { env, timeoutMs: 60_000 },
  )
  check(added, "mcp add-json --scope user")
}

export async function unregisterClaude(
  run: Run,
  claude: string,
  env: Record<string, string | undefined>,
): Promise<void> {
  const removed = await run([claude, "mcp", "remove", "--scope", "user", SERVER_NAME], { env, timeoutMs: 60_000 })
  check(removed, "mcp remove --scope user")
}
