// Shared by the escape batteries: the plugin test world (scripted model, isolated home with the
// freshly built plugin, the real OpenCode) plus this program's MCP server in-process, so an attack
// can go through the front door (the scout/worker tools and their admission) or straight to a
// session (runAgent) to prove the plugin holds on its own.
import { afterAll, beforeAll } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import type { HomeOptions } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import { serveInProcess } from "../helpers/in-process"
import { jsonFiles } from "../helpers/records"
import { scratch as scratchDir } from "../helpers/world"
import { startWorld, stopWorld, type World } from "../plugin/_world"

export { textOf } from "../helpers/mcp"

export { makeRepo, runAgent, startWorld, stopWorld, type World } from "../plugin/_world"

export interface Front {
  /** `timeoutMs`: the client's wait for the answer, instead of 170 s (a call that runs two checks). */
  call(tool: string, args: Record<string, unknown>, options?: { timeoutMs?: number }): Promise<CallToolResult>
  close(): Promise<void>
}

/** The MCP tools in-process on the world's runtime (its shared server). */
export async function front(world: World): Promise<Front> {
  const served = await serveInProcess(world.runtime, "escape-tests")
  return {
    // A worker's turn on a loaded machine can pass the SDK's 60 s default; the tests' own deadlines bound it.
    call: (tool, args, options) =>
      served.client.callTool(
        { name: tool, arguments: args },
        {
          timeout: options?.timeoutMs ?? 170_000,
        },
      ) as Promise<CallToolResult>,
    close: served.close,
  }
}

export interface Battery {
  world: World
  mcp: Front
}

/**
 * The world and its front for a whole test file: started in a beforeAll registered here (so one the
 * file adds after this call can plant what its tests need in the running world), closed in an afterAll.
 * Both objects are filled in by that beforeAll: the file's top level may hold them, hooks and tests use them.
 */
export function battery(scripts: Record<string, ScriptInput>, home: Omit<HomeOptions, "modelUrl"> = {}): Battery {
  const world = {} as World
  let served: Front | undefined
  beforeAll(async () => {
    Object.assign(world, await startWorld(scripts, home))
    served = await front(world)
  }, 120_000)
  afterAll(async () => {
    await served?.close()
    await stopWorld("runtime" in world ? world : undefined)
  })
  const mcp: Front = {
    call: (tool, args, options) => served!.call(tool, args, options),
    close: async () => served?.close(),
  }
  return { world, mcp }
}

/** The patch an isolated worker's result names, as patch_apply and review take it back. */
export interface PatchOut {
  patch_id: string
  digest: string
}

export const structuredOf = (result: CallToolResult) =>
  result.structuredContent as Record<string, unknown> & { status: string; warnings?: string[] }

/** A scratch directory the world removes at the end. */
export const scratch = (world: World, prefix = "oc-orch-escape-") => scratchDir(world, prefix)

export const taskCount = async (world: World) => (await jsonFiles(world.home.paths.tasksDir)).length
