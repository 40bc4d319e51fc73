// An MCP client for this program's own `serve` over stdio, the way Codex and Claude Code start it: the
// demo, the tests and the bench all talk to the server through it.
import { Client } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import type { Env } from "../config/flags"

export interface Connected {
  client: Client
  pid: number
  close(): Promise<void>
}

export async function connectStdio(
  command: string[],
  env: Env,
  options: { clientName?: string; stderr?: "pipe" | "inherit" } = {},
): Promise<Connected> {
  const [bin, ...args] = command
  const transport = new StdioClientTransport({
    command: bin!,
    args,
    env: env as Record<string, string>,
    stderr: options.stderr ?? "pipe",
  })
  const client = new Client({ name: options.clientName ?? "opencode-mcp-orchestrator-client", version: "1" })
  await client.connect(transport)
  return { client, pid: transport.pid!, close: () => client.close() }
}
