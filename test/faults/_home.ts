// The isolated home the compiled-`serve` fault tests share for a whole file, and the scripts more than one
// of them plays: a worker's edit whose report comes a while later (a window to kill or starve it in) and a
// scout that answers at once.
import { afterAll, beforeAll } from "bun:test"
import type { ScriptInput } from "../../src/model/script"
import { startHome, stopHome, type HomeWorld } from "../helpers/world"

/** Writes `edited.txt`, then reports `delayMs` later. */
export const slowEdit = (delayMs: number): ScriptInput => ({
  turns: [
    {
      steps: [
        { tool: "write", args: { filePath: "edited.txt", content: "edited\n" } },
        { text: "done after a while", delayMs },
      ],
    },
  ],
})

export const quick: ScriptInput = { turns: [{ steps: [{ text: "quick report" }] }] }

/**
 * The home for a whole test file: started in a beforeAll registered here (one the file adds after this
 * call runs after it, on the started home), stopped in an afterAll. Filled in by that beforeAll: the
 * file's top level may hold it, hooks and tests use it.
 */
export function homeFor(scripts: Record<string, ScriptInput>): HomeWorld {
  const world = {} as HomeWorld
  beforeAll(async () => {
    Object.assign(world, await startHome(scripts))
  })
  afterAll(async () => {
    await stopHome("home" in world ? world : undefined)
  })
  return world
}
