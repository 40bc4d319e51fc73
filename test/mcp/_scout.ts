// The scout tool called through an MCP client, the way a parent model calls it, with a request
// timeout (ms) of its own: the SDK's default of 60 s is shorter than some scouts take.
import type { Client, CallToolResult } from "@modelcontextprotocol/client"
import { structured, type Structured } from "./_setup"

/** The scout's result for `args`. */
export const callScout = (client: Client, args: Record<string, unknown>, timeout: number) =>
  client.callTool({ name: "scout", arguments: args }, { timeout }) as Promise<CallToolResult>

/** The scout's structured content for `args`. */
export const scoutAnswer = async (
  client: Client,
  args: Record<string, unknown>,
  timeout: number,
): Promise<Structured> => structured(await callScout(client, args, timeout))
