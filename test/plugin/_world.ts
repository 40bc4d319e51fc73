// Shared by the plugin tests: the scripted model, an isolated home with the bundled plugin and the
// rendered agents, the real OpenCode (one shared server per file) and throwaway git workspaces. A
// test runs one agent through one script and reads what each tool returned.
import { readFlags } from "../../src/config/flags"
import { runTurn, type Turn } from "../../src/engine/turn/turn"
import { Runtime } from "../../src/engine/capacity/runtime"
import type { HomeOptions } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import type { ToolResult } from "../../src/model/conversation"
import { parseModel } from "../../src/opencode/session"
import { run } from "../../src/util/process"
import { commitRepo } from "../helpers/git"
import { repository, type RepositoryOptions, startHome, stopHome, type HomeWorld } from "../helpers/world"

export const ROOT = `${import.meta.dir}/../..`

/** The plugin the isolated home writes is dist/plugin.txt: build it from the current source first. */
export async function buildPlugin() {
  const result = await run(["bun", "scripts/build-plugin.ts"], { cwd: ROOT })
  if (result.code !== 0) throw new Error(`build-plugin failed:\n${result.stdout}${result.stderr}`)
}

export interface World extends HomeWorld {
  runtime: Runtime
}

/** `home` adds to the isolated home: extra variables (PATH is the test one), config, providers. */
export async function startWorld(
  scripts: Record<string, ScriptInput>,
  home: Omit<HomeOptions, "modelUrl"> = {},
): Promise<World> {
  await buildPlugin()
  const world = await startHome(scripts, home)
  return { ...world, runtime: new Runtime(readFlags(world.home.env)) }
}

export async function stopWorld(world: World | undefined) {
  world?.runtime.close()
  await stopHome(world)
}

/** A git repository with one committed file, at a path an earlier test's may have had (helpers/world.ts). */
export const makeRepo = (world: World, options?: RepositoryOptions): Promise<string> =>
  repository(
    world,
    "oc-orch-plugin-",
    async (dir) => {
      await commitRepo(dir, { "README.md": "# fixture\n" }, "initial")
    },
    options,
  )

/**
 * Runs `agent` in `dir` on the named script (on `model`, default `scripted/fast`) and returns the turn,
 * the tool results of this session and its id.
 */
export async function runAgent(
  world: World,
  agent: string,
  dir: string,
  script: string,
  model = "scripted/fast",
): Promise<{ turn: Turn; results: ToolResult[]; sessionID: string }> {
  const { client, hub } = await world.runtime.opencode()
  let sessionID = ""
  const before = world.model.toolResults().length
  const turn = await runTurn(
    {
      client,
      hub,
      workspace: dir,
      agent,
      title: `plugin test ${script}`,
      route: parseModel(model),
      deadline: Date.now() + 90_000,
      signal: new AbortController().signal,
      onSession: async (id) => {
        sessionID = id
      },
      onProgress: () => {},
    },
    `[script:${script}] run the script`,
  )
  if (!sessionID) throw new Error("no session was created")
  return { turn, results: world.model.toolResults().slice(before), sessionID }
}
