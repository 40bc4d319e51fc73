// The parts every OpenCode test world shares: the scripted model, an isolated home whose PATH finds the
// pinned opencode, and the scratch directories that go with it. The plugin, escape and MCP worlds build
// on it; the tests that drive the compiled binary use it as it is. One world per test file.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { createIsolatedHome, type HomeOptions, type IsolatedHome } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import { TEST_PATH } from "./mcp"

export interface HomeWorld {
  model: ScriptedModel
  home: IsolatedHome
  /** Removed by stopHome: repositories and scratch directories the tests made. */
  dirs: string[]
}

/** `options` adds to the isolated home: extra variables (PATH is the test one), config, providers. */
export async function startHome(
  scripts: Record<string, ScriptInput>,
  options: Omit<HomeOptions, "modelUrl"> = {},
): Promise<HomeWorld> {
  const model = await startScriptedModel({ scripts })
  const home = await createIsolatedHome({ ...options, modelUrl: model.url, env: { PATH: TEST_PATH, ...options.env } })
  return { model, home, dirs: [] }
}

/** Stops the shared OpenCode server of the home, then the model, and removes the home and every dir. */
export async function stopHome(world: HomeWorld | undefined) {
  if (!world) return
  await stopServer(world.home.paths)
  await world.model.stop()
  await world.home.dispose()
  for (const dir of world.dirs) await rm(dir, { recursive: true, force: true })
}

/** A scratch directory the world removes at the end. */
export async function scratch(world: HomeWorld, prefix: string): Promise<string> {
  const dir = await mkdtemp(`${tmpdir()}/${prefix}`)
  world.dirs.push(dir)
  return dir
}
