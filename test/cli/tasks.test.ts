// `tasks` lists through the engine's listing (src/engine/listing.ts): a --limit that is negative,
// zero, not a number or over the bound is refused with exit 2 and a message naming the bounds, before
// anything is read (it used to list 20, or every task, in silence). Control: a good limit lists
// that many of the records on disk, newest first.
import { describe, expect, test } from "bun:test"
import { mkdir } from "node:fs/promises"
import { resolve } from "node:path"
import { readFlags } from "../../src/config/flags"
import { resolvePaths } from "../../src/config/paths"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { TaskStore } from "../../src/engine/store/task-store"
import { run } from "../../src/util/process"
import { taskRecord } from "../helpers/records"
import { tempDir } from "../helpers/temp"

const MAIN = resolve(import.meta.dir, "../../src/cli/main.ts")

const envOf = (home: string) => ({
  HOME: home,
  PATH: "/usr/bin:/bin",
  XDG_CONFIG_HOME: `${home}/.config`,
  XDG_DATA_HOME: `${home}/.local/share`,
  XDG_STATE_HOME: `${home}/.local/state`,
  XDG_CACHE_HOME: `${home}/.cache`,
  BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0",
})

const tasks = (home: string, args: string[]) =>
  run([process.execPath, MAIN, "tasks", ...args], { env: envOf(home), timeoutMs: 60_000 })

const record = (createdAt: string): TaskRecord => taskRecord({ workspace: "/w/repo", createdAt, updatedAt: createdAt })

/** Two records in the home's task store, the second newer. */
async function seed(home: string): Promise<TaskRecord[]> {
  const dir = resolvePaths(readFlags(envOf(home))).tasksDir
  await mkdir(dir, { recursive: true })
  const store = new TaskStore(dir)
  const records = [record("2026-12-01T10:00:00.000Z"), record("2026-12-01T11:00:00.000Z")]
  for (const entry of records) await store.save(entry)
  return records
}

describe("tasks --limit", () => {
  test.each([
    ["negative", ["--limit", "-5"], "digits only"],
    ["negative, with =", ["--limit=-5"], "digits only"],
    ["zero", ["--limit", "0"], "a value from 1 to 200"],
    ["not a number", ["--limit", "abc"], "digits only"],
    ["a fraction", ["--limit", "1.5"], "digits only"],
    ["over the bound", ["--limit", "201"], "a value from 1 to 200"],
  ])("%s: exit 2, the bounds named, no stack trace, nothing listed", async (_, args, advice) => {
    await using home = await tempDir("oc-orch-cli-tasks-")
    await seed(home.path)
    const outcome = await tasks(home.path, [...args, "--json"])
    expect(outcome.code).toBe(2)
    expect(outcome.stderr).toContain("--limit=")
    expect(outcome.stderr).toContain("expected an integer from 1 to 200")
    expect(outcome.stderr).toContain(advice)
    expect(outcome.stderr).not.toMatch(/\n\s+at /)
    expect(outcome.stdout).toBe("")
  })

  test("control: --limit 1 lists the newest record; no limit lists both", async () => {
    await using home = await tempDir("oc-orch-cli-tasks-")
    const [older, newer] = await seed(home.path)
    const one = await tasks(home.path, ["--limit", "1", "--json"])
    expect(one.code).toBe(0)
    expect((JSON.parse(one.stdout) as TaskRecord[]).map((r) => r.id)).toEqual([newer!.id])
    const both = await tasks(home.path, [])
    expect(both.code).toBe(0)
    expect(both.stdout).toContain(newer!.id)
    expect(both.stdout).toContain(older!.id)
    expect(both.stdout.indexOf(newer!.id)).toBeLessThan(both.stdout.indexOf(older!.id))
  })
})
