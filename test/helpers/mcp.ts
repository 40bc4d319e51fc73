// Starts this program's MCP server over stdio (the compiled binary by default) in an isolated home
// and connects the SDK Client to it, the way Codex and Claude Code do.
import type { CallToolResult } from "@modelcontextprotocol/client"
import type { Env } from "../../src/config/flags"
import { connectStdio as connect, type Connected } from "../../src/model/stdio-client"

export const ROOT = `${import.meta.dir}/../..`
export const BINARY = `${ROOT}/dist/opencode-mcp-orchestrator`
/** PATH with the pinned opencode (node_modules/.bin) first. */
export const TEST_PATH = `${ROOT}/node_modules/.bin:/usr/local/bin:/usr/bin:/bin`

export type { Connected }

export const connectStdio = (
  env: Env,
  command = [BINARY, "serve"],
  clientName = "orchestrator-tests",
): Promise<Connected> => connect(command, env, { clientName })

export const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n")
