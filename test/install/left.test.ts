// uninstall keeps the state and cache dirs (an unapplied patch, a log may still be wanted) and says
// so: where they are, what they take, which patches they still hold, and the command that removes
// them, which removes exactly those paths even when a name holds a space or a quote. Control: with
// neither dir there, nothing is said about them.
import { describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { readFlags } from "../../src/config/flags"
import { clientHomes } from "../../src/install/homes"
import { leftLines } from "../../src/install/left"
import { uninstall } from "../../src/install/uninstall"
import { run } from "../../src/util/process"
import { savePatchRecord } from "../../src/workspace/patches/patches"
import { layoutOf } from "../../src/workspace/git/private-git"
import { machine, type Machine } from "./helpers"

const uninstallIn = async (m: Machine, dryRun = false) => {
  const lines: string[] = []
  expect(
    await uninstall(
      { paths: m.paths, homes: clientHomes(readFlags(m.env)), env: m.env, run, print: (l) => lines.push(l) },
      { dryRun },
    ),
  ).toBe(0)
  return lines
}

async function patches(m: Machine) {
  const base = {
    version: 1 as const,
    source: { workspace: `${m.dir}/repo`, root: `${m.dir}/repo`, gitDir: `${m.dir}/repo/.git` },
    base: "0".repeat(40),
    createdAt: "2026-11-30T10:00:00Z",
  }
  const digest = "d".repeat(64)
  const ready = { ...base, status: "ready" as const, digest, files: [], bytes: 10 }
  await savePatchRecord(m.paths.patchesDir, {
    ...ready,
    id: "patch_a1_00ff",
    layout: layoutOf(m.paths.worktreesDir, "lane-1"),
  })
  await savePatchRecord(m.paths.patchesDir, {
    ...ready,
    id: "patch_a2_00ee",
    layout: layoutOf(m.paths.worktreesDir, "lane-2"),
    appliedDigest: digest,
    appliedAt: "2026-11-30T11:00:00.000Z",
  })
  await Bun.write(`${m.paths.worktreesDir}/lane-1/tree/big.bin`, new Uint8Array(300 * 1024))
}

describe("uninstall and what it leaves", () => {
  test("names the state and cache dirs with their sizes, the patches they hold, and how to remove them; keeps both", async () => {
    using m = machine()
    await patches(m)
    const dry = await uninstallIn(m, true)
    expect(dry).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^Would leave the state dir \\(task records, patches, logs\\) ${m.paths.stateDir} \\([0-9.]+ KB\\)\\.$`,
        ),
      ),
    )
    const lines = await uninstallIn(m)
    const cache = lines.find((line) => line.startsWith(`Left the cache dir (isolated worktrees) ${m.paths.cacheDir} (`))
    expect(cache).toBeDefined()
    // What it takes is measured, not guessed: the 300 KB file at least.
    expect(Number(cache!.match(/\(([0-9.]+) KB\)/)?.[1])).toBeGreaterThanOrEqual(300)
    expect(lines).toContain(
      "It holds 1 patch(es) waiting for review and 1 applied, not discarded: remove them only if you no longer want them.",
    )
    expect(lines).toContain(`To remove them too: rm -rf ${m.paths.stateDir} ${m.paths.cacheDir}`)
    expect(existsSync(`${m.paths.patchesDir}/patch_a1_00ff.json`)).toBe(true)
    expect(existsSync(`${m.paths.worktreesDir}/lane-1/tree/big.bin`)).toBe(true)
  }, 60_000)

  test("with neither dir there, nothing is said about them (control)", async () => {
    using m = machine()
    const lines = await uninstallIn(m)
    expect(lines.some((line) => line.includes("state dir") || line.includes("rm -rf"))).toBe(false)
  }, 60_000)

  test("the removal command names exactly the dirs, whatever their names hold", async () => {
    const paths = ["/tmp/a b'c/state", "/tmp/x;rm -rf ~/cache", "/tmp/$(id)/`id`"]
    const lines = leftLines(
      paths.map((path) => ({ what: "dir", path, bytes: 1, partial: false })),
      { waiting: 0, applied: 0 },
      false,
    )
    const command = lines.at(-1)!.replace("To remove them too: rm -rf ", "")
    const words = await run(["sh", "-c", `printf '%s\\n' ${command}`], { timeoutMs: 10_000 })
    expect(words.stdout.split("\n").slice(0, -1)).toEqual(paths)
  })
})
