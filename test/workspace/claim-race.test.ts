// Taking back a claim whose holder is gone, while others race for it (a lane or a fan-out slot after a
// crash): only the very file judged gone is removed, so a live taker's claim is never displaced and
// two takers never share one lane. Attack: 12 concurrent claimLane calls against a stale lane-1, 100
// rounds, never two on lane-1. Control: the move-aside-then-put-back reclaim it replaces, raced the
// same way, lets two takers win.
import { describe, expect, test } from "bun:test"
import { link, mkdir, readdir, rename, rm, writeFile } from "node:fs/promises"
import { z } from "zod"
import { linkExclusive } from "../../src/util/claim-file"
import { readStateFile } from "../../src/util/state-file"
import { claimLane, MAX_LANES } from "../../src/workspace/worktree/lanes"
import { tempDir } from "../helpers/temp"

const ROUNDS = 100
/** createWorktree's default bounds: 64 lanes, no task of the engine's in any. */
const NO_TASKS = { max: MAX_LANES, inUse: async () => false }
const TAKERS = 12
/** A claim whose owner is not running and whose patch has no record: anyone may take it back. */
const STALE = JSON.stringify({
  patchId: "p_gone",
  ownerPid: 2 ** 22 + 7,
  ownerStart: "never",
  since: new Date(0).toISOString(),
})

describe("a stale lane claim raced for", () => {
  test(`${ROUNDS} rounds of ${TAKERS} concurrent takers: lane-1 goes to one, every lane to one, no reclaim lock left`, async () => {
    await using dir = await tempDir("oc-orch-claims-")
    let shared = 0
    for (let round = 0; round < ROUNDS; round++) {
      const registry = `${dir.path}/r${round}`
      await mkdir(`${registry}/lanes`, { recursive: true })
      await writeFile(`${registry}/lanes/lane-1.json`, STALE)
      const lanes = await Promise.all(
        Array.from({ length: TAKERS }, (_, i) => claimLane(dir.path, registry, `p_${round}_${i}`, undefined, NO_TASKS)),
      )
      if (lanes.filter((lane) => lane === "lane-1").length !== 1 || new Set(lanes).size !== TAKERS) shared++
      expect((await readdir(`${registry}/lanes`)).filter((name) => !name.endsWith(".json"))).toEqual([])
    }
    expect(shared).toBe(0)
  }, 120_000)

  test("control: moving the stale file aside and putting back a live one lets two takers share it", async () => {
    await using dir = await tempDir("oc-orch-claims-")
    const Schema = z.object({ id: z.string(), stale: z.boolean() })
    // The reclaim as it was: rename whatever is there aside, read it, put it back if it turned out live.
    const moveAside = async (file: string) => {
      const holder = await readStateFile(file, Schema, "fix")
      if (!holder) return false
      if (!holder.stale) return true
      const aside = `${file}.${Math.random()}.stale`
      if (
        !(await rename(file, aside).then(
          () => true,
          () => false,
        ))
      )
        return false
      const moved = await readStateFile(aside, Schema, "fix")
      if (moved && !moved.stale) {
        await link(aside, file).catch(() => undefined)
        await rm(aside, { force: true })
        return true
      }
      await rm(aside, { force: true })
      return false
    }
    let shared = 0
    for (let round = 0; round < ROUNDS * 2 && !shared; round++) {
      const file = `${dir.path}/claim-${round}.json`
      await writeFile(file, JSON.stringify({ id: "gone", stale: true }))
      const winners = await Promise.all(
        Array.from({ length: TAKERS }, async (_, i) => {
          const temp = `${dir.path}/t-${round}-${i}`
          await writeFile(temp, JSON.stringify({ id: `c${i}`, stale: false }))
          for (let tries = 0; tries < 3; tries++) {
            if (await moveAside(file)) return false
            if (await linkExclusive(temp, file)) return true
          }
          return false
        }),
      )
      if (winners.filter(Boolean).length > 1) shared++
    }
    expect(shared).toBeGreaterThan(0)
  }, 120_000)
})
