// One scripted world and one in-process connection for a whole test file, and the ways its tests wait on
// a delegation: a call followed through task_status until it settles, the task's record as it is on disk,
// and a config change that holds for one piece of work.
import { afterAll, beforeAll } from "bun:test"
import type { ConfigInput } from "../../src/config/schema"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import type { ScriptInput } from "../../src/model/script"
import { readJson, writeJson } from "../../src/util/fs"
import { connect, startWorld, stopWorld, structured, type Connected, type Structured, type World } from "./_setup"

export { connect, makeRepo, structured, text, type Connected, type Structured, type World } from "./_setup"

export interface Battery {
  world: World
  mcp: Connected
  /** The tool's result; while it says `running`, task_status's (20 s a wait, 20 waits at the most). */
  call(name: string, args: Record<string, unknown>, via?: Connected): Promise<Structured>
  recordOf(id: unknown): Promise<TaskRecord>
  /** `change` merged into config.json while `work` runs; the file as it was afterwards, however `work` ends. */
  withConfig(change: Record<string, unknown>, work: () => Promise<void>): Promise<void>
}

/**
 * The world (`config` overrides its config.json) and a connection to it, started in a beforeAll registered
 * here and closed in an afterAll: a hook the file registers after this call runs after them. Both objects are
 * filled in by that beforeAll: the file's top level may hold them, hooks and tests use them.
 */
export function battery(scripts: Record<string, ScriptInput>, config?: Partial<ConfigInput>): Battery {
  const world = {} as World
  const mcp = {} as Connected
  beforeAll(async () => {
    Object.assign(world, await startWorld(scripts, config))
    Object.assign(mcp, await connect(world))
  }, 60_000)
  afterAll(async () => {
    if ("close" in mcp) await mcp.close()
    await stopWorld("home" in world ? world : undefined)
  })
  async function call(name: string, args: Record<string, unknown>, via = mcp): Promise<Structured> {
    let result = structured(await via.client.callTool({ name, arguments: args }, { timeout: 120_000 }))
    for (let i = 0; i < 20 && result.status === "running"; i++)
      result = structured(
        await via.client.callTool(
          { name: "task_status", arguments: { task_id: result.task_id, wait_seconds: 20 } },
          { timeout: 60_000 },
        ),
      )
    return result
  }
  const recordOf = async (id: unknown) => (await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${id}.json`))!
  async function withConfig(change: Record<string, unknown>, work: () => Promise<void>) {
    const file = world.home.paths.configFile
    const before = await readJson<Record<string, unknown>>(file)
    await writeJson(file, { ...before, ...change })
    try {
      await work()
    } finally {
      await writeJson(file, before)
    }
  }
  return { world, mcp, call, recordOf, withConfig }
}
