// Shared by the escape batteries: the plugin test world (scripted model, isolated home with the
// freshly built plugin, the real OpenCode) plus this program's MCP server in-process, so an attack
// can go through the front door (the scout/worker tools and their admission) or straight to a
// session (runAgent) to prove the plugin holds on its own.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { mkdtemp, readdir } from "node:fs/promises"
import { tmpdir } from "node:os"
import { Delegations } from "../../src/engine/lifecycle"
import { createServer } from "../../src/mcp/server"
import type { World } from "../plugin/_world"

export { makeRepo, runAgent, startWorld, stopWorld, type World } from "../plugin/_world"

export interface Front {
  call(tool: string, args: Record<string, unknown>): Promise<CallToolResult>
  close(): Promise<void>
}

/** The MCP tools in-process on the world's runtime (its shared server). */
export async function front(world: World): Promise<Front> {
  const delegations = new Delegations(world.runtime, { recover: true })
  const server = createServer(world.runtime, delegations)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "escape-tests", version: "1" })
  await client.connect(clientSide)
  return {
    call: (tool, args) => client.callTool({ name: tool, arguments: args }) as Promise<CallToolResult>,
    close: async () => {
      await delegations.shutdown()
      await client.close()
      await server.close()
    },
  }
}

export const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n")
export const structuredOf = (result: CallToolResult) =>
  result.structuredContent as Record<string, unknown> & { status: string; warnings?: string[] }

/** A scratch directory the world removes at the end. */
export async function scratch(world: World, prefix = "oc-orch-escape-"): Promise<string> {
  const dir = await mkdtemp(`${tmpdir()}/${prefix}`)
  world.dirs.push(dir)
  return dir
}

export const taskCount = async (world: World) =>
  (await readdir(world.home.paths.tasksDir).catch(() => [] as string[])).filter((name) => name.endsWith(".json")).length
