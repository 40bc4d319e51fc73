// Shared by the escape batteries: the plugin test world (scripted model, isolated home with the
// freshly built plugin, the real OpenCode) plus this program's MCP server in-process, so an attack
// can go through the front door (the scout/worker tools and their admission) or straight to a
// session (runAgent) to prove the plugin holds on its own.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { serveInProcess } from "../helpers/in-process"
import { jsonFiles } from "../helpers/records"
import { scratch as scratchDir } from "../helpers/world"
import type { World } from "../plugin/_world"

export { textOf } from "../helpers/mcp"

export { makeRepo, runAgent, startWorld, stopWorld, type World } from "../plugin/_world"

export interface Front {
  call(tool: string, args: Record<string, unknown>): Promise<CallToolResult>
  close(): Promise<void>
}

/** The MCP tools in-process on the world's runtime (its shared server). */
export async function front(world: World): Promise<Front> {
  const served = await serveInProcess(world.runtime, "escape-tests")
  return {
    call: (tool, args) => served.client.callTool({ name: tool, arguments: args }) as Promise<CallToolResult>,
    close: served.close,
  }
}

export const structuredOf = (result: CallToolResult) =>
  result.structuredContent as Record<string, unknown> & { status: string; warnings?: string[] }

/** A scratch directory the world removes at the end. */
export const scratch = (world: World, prefix = "oc-orch-escape-") => scratchDir(world, prefix)

export const taskCount = async (world: World) => (await jsonFiles(world.home.paths.tasksDir)).length
