// One world for a whole test file, as battery() in test/escape/_world.ts gives the escape files: the
// file states the scripts its tests play, and the start and the stop are registered here.
import { afterAll, beforeAll } from "bun:test"
import type { ConfigInput } from "../../src/config/schema"
import type { ScriptInput } from "../../src/model/script"
import { startWorld, stopWorld, type World } from "./_setup"

/**
 * The world of every test in the file, filled in by a beforeAll registered here (so one the file adds after
 * this call finds it running) and stopped in an afterAll. The file's top level may hold it; hooks and
 * tests use it.
 */
export function fileWorld(scripts: Record<string, ScriptInput>, config?: Partial<ConfigInput>): World {
  const world = {} as World
  beforeAll(async () => {
    Object.assign(world, await startWorld(scripts, config))
  })
  // A start that failed left nothing to stop.
  afterAll(() => stopWorld("home" in world ? world : undefined))
  return world
}
