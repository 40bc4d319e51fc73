// The sweep of what task records do not hold: a file set aside is aged from when it was set aside (not
// from its old mtime), garbage ages by its ctime, and a link or a directory with a sweepable name is
// never followed or removed; a pass removes at most perPass files.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rename, rm, symlink, utimes, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { readFlags } from "../../src/config/flags"
import { resolvePaths, type Paths } from "../../src/config/paths"
import { sweep, SWEEP_MS } from "../../src/engine/retention/sweep"

const LIMITS = { runRetentionHours: 24, runRetentionCount: 20 }
let root: string
let paths: Paths

beforeAll(async () => {
  root = await mkdtemp(`${tmpdir()}/oc-orch-sweep-`)
  paths = resolvePaths(
    readFlags({
      HOME: root,
      XDG_STATE_HOME: `${root}/state`,
      XDG_CONFIG_HOME: `${root}/config`,
      XDG_CACHE_HOME: `${root}/cache`,
      XDG_DATA_HOME: `${root}/data`,
    }),
  )
  for (const dir of [paths.tasksDir, paths.groupsDir, paths.patchesDir, paths.ownersDir])
    await mkdir(dir, { recursive: true })
})

afterAll(() => rm(root, { recursive: true, force: true }))

test("a set-aside file ages from when it was set aside; links, directories and outside files are left alone", async () => {
  const month = new Date(Date.now() - 30 * 24 * 3600_000)
  // A record that was old when it was found torn: its mtime is a month back, the rename is now.
  const torn = `${paths.tasksDir}/task_abc_0001.json`
  await writeFile(torn, "{ torn")
  await utimes(torn, month, month)
  await rename(torn, `${torn}.corrupt`)
  await writeFile(`${paths.groupsDir}/group_abc_0001.json`, "garbage, no date")
  const outside = `${root}/precious.txt`
  await writeFile(outside, "keep me\n")
  await symlink(outside, `${paths.groupsDir}/group_abc_0002.json.corrupt`)
  await symlink(outside, `${paths.patchesDir}/patch_abc_0001.discarded`)
  await mkdir(`${paths.ownersDir}/x.corrupt`)

  // Now: nothing is past its keep time, whatever its mtime says.
  expect(await sweep(paths, { limits: LIMITS })).toMatchObject({ groups: 0, setAside: 0, tombstones: 0 })
  expect(existsSync(`${torn}.corrupt`)).toBe(true)
  expect(existsSync(`${paths.groupsDir}/group_abc_0001.json`)).toBe(true)

  // A week and a day later: the set-aside file and the garbage group go; the links, their target and the directory stay.
  const later = Date.now() + SWEEP_MS + 24 * 3600_000
  expect(await sweep(paths, { limits: LIMITS, now: later })).toMatchObject({ groups: 1, setAside: 1, tombstones: 0 })
  expect(existsSync(`${torn}.corrupt`)).toBe(false)
  expect(existsSync(`${paths.groupsDir}/group_abc_0001.json`)).toBe(false)
  expect(existsSync(`${paths.groupsDir}/group_abc_0002.json.corrupt`)).toBe(true)
  expect(existsSync(`${paths.patchesDir}/patch_abc_0001.discarded`)).toBe(true)
  expect(existsSync(`${paths.ownersDir}/x.corrupt`)).toBe(true)
  expect(await Bun.file(outside).text()).toBe("keep me\n")
})

test("a sweep removes at most perPass files; the next pass takes the rest", async () => {
  const stated = new Date(Date.now() - SWEEP_MS - 3600_000).toISOString()
  for (let i = 0; i < 7; i++) {
    const id = `group_bounded_${String(i).padStart(4, "0")}`
    await writeFile(`${paths.groupsDir}/${id}.json`, JSON.stringify({ version: 1, id, createdAt: stated, tasks: [] }))
  }
  expect((await sweep(paths, { limits: LIMITS, perPass: 3 })).groups).toBe(3)
  expect((await sweep(paths, { limits: LIMITS, perPass: 3 })).groups).toBe(3)
  expect((await sweep(paths, { limits: LIMITS, perPass: 3 })).groups).toBe(1)
  expect((await sweep(paths, { limits: LIMITS, perPass: 3 })).groups).toBe(0)
})
