// The world an end-to-end file with a real parent client shares: a repository, the scripted model (whose
// scripts may name the repository), and an isolated home whose PATH finds the pinned opencode.
import { afterAll, beforeAll } from "bun:test"
import { rm } from "node:fs/promises"
import { createRepository } from "../../src/model/demo"
import { createIsolatedHome, type HomeOptions, type IsolatedHome } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import { TEST_PATH } from "../helpers/mcp"

export interface RepoWorld {
  model: ScriptedModel
  home: IsolatedHome
  repo: string
}

export interface RepoSetup {
  /** The repository's temp dir prefix. */
  prefix?: string
  files: Record<string, string>
  scripts: (repo: string) => Record<string, ScriptInput>
  /** Added to the isolated home (PATH is the test one). */
  home?: Omit<HomeOptions, "modelUrl">
  /** The beforeAll's timeout; bun's default when not given. */
  timeoutMs?: number
}

/**
 * The world for a whole test file: made in a beforeAll registered here, then `ready` adds the client's own
 * part (its fields join the world's); everything is stopped and removed in an afterAll, what got made of it
 * when the start failed half way. The fields are filled in by that beforeAll: hooks and tests use them.
 */
export function repoWorld<Extra extends object>(
  setup: RepoSetup,
  ready: (world: RepoWorld) => Promise<Extra>,
): RepoWorld & Extra {
  const world = {} as RepoWorld & Extra
  beforeAll(async () => {
    world.repo = await createRepository(setup.prefix ?? "oc-orch-repo-", setup.files)
    world.model = await startScriptedModel({ scripts: setup.scripts(world.repo) })
    world.home = await createIsolatedHome({
      ...setup.home,
      modelUrl: world.model.url,
      env: { PATH: TEST_PATH, ...setup.home?.env },
    })
    Object.assign(world, await ready(world))
  }, setup.timeoutMs)
  afterAll(async () => {
    const { model, home, repo } = world as Partial<RepoWorld>
    if (home) await stopServer(home.paths)
    await model?.stop()
    await home?.dispose()
    if (repo) await rm(repo, { recursive: true, force: true })
  })
  return world
}
