// Shared by the plugin tests: the scripted model, an isolated home with the bundled plugin and the
// rendered agents, the real OpenCode (one shared server per file) and throwaway git workspaces. A
// test runs one agent through one script and reads what each tool returned.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { readFlags } from "../../src/config/flags"
import { runTurn, type Turn } from "../../src/engine/delegate"
import { Runtime } from "../../src/engine/runtime"
import { createIsolatedHome, type HomeOptions, type IsolatedHome } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import type { ToolResult } from "../../src/model/conversation"
import { parseModel } from "../../src/opencode/session"
import { stopServer } from "../../src/opencode/server"
import { run } from "../../src/util/process"
import { TEST_PATH } from "../helpers/mcp"

export const ROOT = `${import.meta.dir}/../..`

/** The plugin the isolated home writes is dist/plugin.txt: build it from the current source first. */
export async function buildPlugin() {
  const result = await run(["bun", "scripts/build-plugin.ts"], { cwd: ROOT })
  if (result.code !== 0) throw new Error(`build-plugin failed:\n${result.stdout}${result.stderr}`)
}

export interface World {
  model: ScriptedModel
  home: IsolatedHome
  runtime: Runtime
  dirs: string[]
}

/** `home` adds to the isolated home: extra variables (PATH is the test one), config, providers. */
export async function startWorld(
  scripts: Record<string, ScriptInput>,
  home: Omit<HomeOptions, "modelUrl"> = {},
): Promise<World> {
  await buildPlugin()
  const model = await startScriptedModel({ scripts })
  const isolated = await createIsolatedHome({ ...home, modelUrl: model.url, env: { PATH: TEST_PATH, ...home.env } })
  const runtime = new Runtime(readFlags(isolated.env))
  return { model, home: isolated, runtime, dirs: [] }
}

export async function stopWorld(world: World | undefined) {
  if (!world) return
  world.runtime.close()
  await stopServer(world.home.paths)
  await world.model.stop()
  await world.home.dispose()
  for (const dir of world.dirs) await rm(dir, { recursive: true, force: true })
}

/** A git repository with one committed file. */
export async function makeRepo(world: World): Promise<string> {
  const dir = await mkdtemp(`${tmpdir()}/oc-orch-plugin-`)
  world.dirs.push(dir)
  await Bun.write(`${dir}/README.md`, "# fixture\n")
  const git = (...args: string[]) =>
    run(["git", ...args], { cwd: dir, env: { PATH: "/usr/bin:/bin", HOME: dir, GIT_CONFIG_NOSYSTEM: "1" } })
  await git("init", "-q")
  await git("add", ".")
  await git("-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "initial")
  return dir
}

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
