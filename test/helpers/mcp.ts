// Starts this program's MCP server over stdio (the compiled binary by default) in an isolated home
// and connects the SDK Client to it, the way Codex and Claude Code do.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { Env } from "../../src/config/flags"

export const ROOT = `${import.meta.dir}/../..`
export const BINARY = `${ROOT}/dist/opencode-mcp-orchestrator`
/** PATH with the pinned opencode (node_modules/.bin) first. */
export const TEST_PATH = `${ROOT}/node_modules/.bin:/usr/local/bin:/usr/bin:/bin`

export interface Connected {
  client: Client
  pid: number
  close(): Promise<void>
}

export async function connectStdio(env: Env, command = [BINARY, "serve"], clientName = "orchestrator-tests"): Promise<Connected> {
  const [bin, ...args] = command
  const transport = new StdioClientTransport({ command: bin!, args, env: env as Record<string, string>, stderr: "pipe" })
  const client = new Client({ name: clientName, version: "1" })
  await client.connect(transport)
  return { client, pid: transport.pid!, close: () => client.close() }
}

export const textOf = (result: CallToolResult) => result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n")
