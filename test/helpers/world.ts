// The parts every OpenCode test world shares: the scripted model, an isolated home whose PATH finds the
// pinned opencode, and the scratch directories that go with it. The plugin, escape and MCP worlds build
// on it; the tests that drive the compiled binary use it as it is. One world per test file.
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { isFinished } from "../../src/engine/records/status"
import { createIsolatedHome, type HomeOptions, type IsolatedHome } from "../../src/model/home"
import type { ScriptInput } from "../../src/model/script"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { connect } from "../../src/opencode/client"
import { readServerRecord, stopServer } from "../../src/opencode/server"
import { whenThisTestEnds } from "./current-test"
import { TEST_PATH } from "./mcp"
import { taskRecords } from "./records"

export interface HomeWorld {
  model: ScriptedModel
  home: IsolatedHome
  /** Removed by stopHome: repositories and scratch directories the tests made. */
  dirs: string[]
  /** Repositories of tests that ended, whose paths a later test's repository may take (see `repository`). */
  ended: string[]
}

/** `options` adds to the isolated home: extra variables (PATH is the test one), config, providers. */
export async function startHome(
  scripts: Record<string, ScriptInput>,
  options: Omit<HomeOptions, "modelUrl"> = {},
): Promise<HomeWorld> {
  const model = await startScriptedModel({ scripts })
  const home = await createIsolatedHome({ ...options, modelUrl: model.url, env: { PATH: TEST_PATH, ...options.env } })
  return { model, home, dirs: [], ended: [] }
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

/**
 * A repository for the running test, made by `make` in an empty directory: at the path of a repository an
 * earlier test of this world made, when nothing of that test still works there, else at a new path.
 * OpenCode boots a location for every directory it is first given (its tools, agents, file watcher and a
 * copy of the project: about 3 CPU-s, against under 1 for a later session there; measured 2026-12-07), and
 * a test's own repository is such a directory; a path taken again is a location OpenCode has booted.
 * The directory is removed and made anew (a new inode, new files, a new history), as a person who
 * deletes a clone and clones again has it. A path is not taken while a task record of the home that names
 * it (or a directory in it) is unfinished or isolated (its patch and worktree refer to it), while a file
 * the home keeps of a directory names it (a lock, a lease, the markers it had, a patch, a group, a frozen
 * definition), or while OpenCode has a session busy there. A repository made outside a test (in a file's
 * beforeAll) is never handed on. `unseen`: a path OpenCode has never been given, for a test of what it
 * does when it first loads a location.
 */
export async function repository(
  world: HomeWorld,
  prefix: string,
  make: (dir: string) => Promise<void>,
  options: RepositoryOptions = {},
) {
  const held = options.unseen ? () => true : await heldPaths(world)
  for (const dir of world.ended) {
    if (held(dir) || (await busy(world, dir))) continue
    world.ended = world.ended.filter((path) => path !== dir)
    await rm(dir, { recursive: true, force: true })
    await mkdir(dir, { mode: 0o700 })
    return lent(world, dir, make)
  }
  const dir = await mkdtemp(`${tmpdir()}/${prefix}`)
  world.dirs.push(dir)
  return lent(world, dir, make)
}

export interface RepositoryOptions {
  unseen?: boolean
}

async function lent(world: HomeWorld, dir: string, make: (dir: string) => Promise<void>): Promise<string> {
  await make(dir)
  whenThisTestEnds(() => {
    world.ended.push(dir)
  })
  return dir
}

/**
 * Which paths the home's state keeps (see `repository`), read once for all the candidates: a task record
 * that names the path or a directory in it and is unfinished or isolated, or any file of a kind the home
 * keeps of a directory that holds the path's text.
 */
async function heldPaths(world: HomeWorld): Promise<(dir: string) => boolean> {
  const { paths } = world.home
  // A record that is not JSON (a test plants one) may name any path: none is taken while one is there.
  const records = await taskRecords(paths.tasksDir).catch(() => undefined)
  if (!records) return () => true
  const live = records.filter((record) => !isFinished(record.status) || record.isolation)
  const named = live.flatMap((record) => [record.workspace, record.isolation?.source, record.reviewed?.cwd])
  const kept = [paths.locksDir, paths.leasesDir, paths.modesDir, paths.patchesDir, paths.groupsDir, paths.frozenDir]
  const texts = (await Promise.all(kept.map(fileTexts))).flat()
  return (dir) =>
    named.some((path) => path === dir || path?.startsWith(`${dir}/`)) || texts.some((text) => text.includes(dir))
}

/** Whether OpenCode has a session busy in `dir`, or cannot say. */
async function busy(world: HomeWorld, dir: string): Promise<boolean> {
  const { paths } = world.home
  const server = await readServerRecord(paths)
  if (!server) return false
  const status = await connect(server, { standIns: paths.opencodeDirsDir }).session.status({ directory: dir })
  // A server that does not answer (a test killed it) cannot say no session works there: a new path then.
  if (!status.data) return true
  return Object.values(status.data as Record<string, { type: string }>).some((state) => state.type !== "idle")
}

/** The text of every file under `folder`, at any depth; none when it does not exist. */
async function fileTexts(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => [])
  const files = entries.filter((entry) => entry.isFile())
  return Promise.all(files.map((entry) => readFile(`${entry.parentPath}/${entry.name}`, "utf8").catch(() => "")))
}
