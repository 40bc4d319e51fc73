// Where the apply fault files start: the compiled `serve` on the scripted model, a fresh repository, and
// an isolated worker's patch of it ready to apply (the worker runs one shell command, then reports).
import { expect } from "bun:test"
import { connect, makeRepo, startWorld, structured, type Connected, type World } from "../mcp/_setup"
import { listing } from "./_tree"

export interface PatchWorld {
  world: World
  mcp: Connected
  repo: string
  /** The repository as bytes before any apply (`listing`). */
  before: string[]
  patch: { id: string; digest: string; lane: string }
}

/** A world whose worker made its patch by running `command` under the script name `script`. */
export async function startPatchWorld(script: string, command: string): Promise<PatchWorld> {
  const world = await startWorld({
    [script]: { turns: [{ steps: [{ tool: "sandbox_shell", args: { command } }, { text: "Made the files." }] }] },
  })
  const mcp = await connect(world, { syncBudgetMs: 3000 })
  const repo = await makeRepo(world)
  const before = listing(repo)
  let out = structured(
    await mcp.client.callTool({
      name: "worker",
      arguments: { cwd: repo, task: `Make them. [script:${script}]`, isolation: "worktree" },
    }),
  )
  while (out.status === "running") {
    await Bun.sleep(500)
    out = structured(await mcp.client.callTool({ name: "task_result", arguments: { task_id: out.task_id } }))
  }
  const result = out.patch as { patch_id: string; digest: string }
  expect(result?.patch_id, JSON.stringify(out).slice(0, 600)).toBeString()
  const record = (await Bun.file(`${world.home.paths.patchesDir}/${result.patch_id}.json`).json()) as {
    layout: { dir: string }
  }
  return { world, mcp, repo, before, patch: { id: result.patch_id, digest: result.digest, lane: record.layout.dir } }
}
