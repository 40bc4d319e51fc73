// patch_apply on a disk that fills part-way, then a retry once space returns: the compiled `serve`
// runs in a mount namespace where the repository, the patch's lane (where an apply stages, journals
// and copies) and the patch records share one small tmpfs, holding copies of them at the same paths.
// The tmpfs is filled to leave a number of inodes (then of bytes) free, swept from none to enough, so
// the disk runs out at every step of an apply: copying the stored patch, staging, the journal, the
// writes into the repository, their rollback, the record. After each failing call the repository and
// the record agree (applied and whole after, or waiting and whole before, or waiting with the tree
// reported mixed and its journal kept); after space returns, patch_apply again ends applied, whole
// after, recorded, with no staging or temporary left.
// Control: a tree holding the patch whole under a record that says waiting (what an error answered
// after the last write left before) is answered applied from the files; the same tree with one file
// off is still refused as changed, so the answer comes from the files, not from skipping the check.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { existsSync, readdirSync } from "node:fs"
import { mkdir, rm, statfs, writeFile } from "node:fs/promises"
import { BINARY, connectStdio, textOf } from "../helpers/mcp"
import { stopWorld, type Connected, type World } from "../mcp/_setup"
import { listing, namesBelow, STAGING, TEMPS } from "./_tree"
import { startPatchWorld } from "./_patch-world"

const MAKE = `mkdir -p gen && for i in $(seq 1 20); do echo "generated $i" > gen/f$i.txt; done && head -c 1000000 /dev/urandom > blob.bin && printf 'changed\\n' >> README.md && rm src/tally.ts && echo made`

let world: World
let mcp: Connected
let repo: string
let patch: { id: string; digest: string; lane: string }
let before: string[]
let after: string[]

beforeAll(async () => {
  ;({ world, mcp, repo, before, patch } = await startPatchWorld("made", MAKE))
}, 300_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

/**
 * A `serve` whose repository, lane and patch records are copies on one 64 MiB tmpfs (a mount
 * namespace of its own, same paths); `inside(path)` reaches a path as that namespace sees it.
 */
async function serveOnSmallDisk() {
  const disk = `${world.home.root}/disk`
  await mkdir(disk, { recursive: true })
  const shared = [repo, patch.lane, world.home.paths.patchesDir]
  const binds = shared
    .map((path, i) => `mkdir ${disk}/${i} && cp -a ${path}/. ${disk}/${i}/ && mount --bind ${disk}/${i} ${path}`)
    .join(" && ")
  const script = `mount -t tmpfs -o size=64m,nr_inodes=4096 tmpfs ${disk} && ${binds} && exec "$@"`
  const serve = await connectStdio(world.home.env, [
    "/usr/bin/unshare",
    "--mount",
    "--propagation",
    "private",
    "/bin/bash",
    "-c",
    script,
    "serve",
    BINARY,
    "serve",
  ])
  const inside = (path: string) => `/proc/${serve.pid}/root${path}`
  return { serve, disk: inside(disk), inside }
}

type Small = Awaited<ReturnType<typeof serveOnSmallDisk>>

const applyOn = (small: Small) =>
  small.serve.client.callTool(
    { name: "patch_apply", arguments: { patch_id: patch.id, digest: patch.digest } },
    { timeout: 120_000 },
  ) as Promise<CallToolResult>

/** Fills the tmpfs until only `free` inodes (or bytes) are left. */
async function fill(small: Small, free: { inodes?: number; bytes?: number }) {
  await mkdir(`${small.disk}/fill`)
  const stats = await statfs(small.disk)
  if (free.inodes !== undefined)
    for (let i = 0; i < stats.ffree - free.inodes; i++) await writeFile(`${small.disk}/fill/${i}`, "")
  if (free.bytes !== undefined) {
    const room = stats.bavail * stats.bsize - free.bytes
    if (room > 0) await writeFile(`${small.disk}/fill/bytes`, Buffer.alloc(room))
  }
}

/** What the namespace's record says, and where its repository stands. */
async function standing(small: Small) {
  const record = (await Bun.file(small.inside(`${world.home.paths.patchesDir}/${patch.id}.json`)).json()) as {
    appliedDigest?: string
  }
  const tree = listing(small.inside(repo))
  const runs = readdirSync(small.inside(patch.lane)).filter((name) => STAGING.test(name))
  return {
    applied: record.appliedDigest === patch.digest,
    tree: tree.join("\n") === after.join("\n") ? "after" : tree.join("\n") === before.join("\n") ? "before" : "mixed",
    runs,
    temps: namesBelow(small.inside(repo), TEMPS),
  }
}

/** One trial: a call on a disk with `free` left, the checks of its outcome, space back, the retry. */
async function trial(free: { inodes?: number; bytes?: number }): Promise<string> {
  const small = await serveOnSmallDisk()
  try {
    await fill(small, free)
    const first = await applyOn(small)
    const now = await standing(small)
    const said = textOf(first)
    // The tree and the record agree, and the answer says the same.
    if (!first.isError) {
      expect(now, said).toMatchObject({ applied: true, tree: "after", runs: [], temps: [] })
    } else if (now.tree === "mixed") {
      expect(now.applied, said).toBe(false)
      expect(said).toContain("stopped part-way")
      expect(now.runs.length, said).toBe(1)
    } else {
      expect(now, said).toMatchObject({ applied: false, tree: "before", temps: [] })
    }
    await rm(`${small.disk}/fill`, { recursive: true })
    const retry = await applyOn(small)
    expect(retry.isError, textOf(retry)).toBeFalsy()
    expect(await standing(small)).toMatchObject({ applied: true, tree: "after", runs: [], temps: [] })
    return first.isError ? `error: ${said.split("\n")[0]}` : "applied"
  } finally {
    await small.serve.close()
  }
}

test("control: with room the apply succeeds in the namespace, and the host's repository is untouched", async () => {
  const small = await serveOnSmallDisk()
  try {
    const result = await applyOn(small)
    expect(result.isError, textOf(result)).toBeFalsy()
    after = listing(small.inside(repo))
    expect(after).not.toEqual(before)
  } finally {
    await small.serve.close()
  }
  expect(listing(repo)).toEqual(before)
}, 120_000)

test("ENOSPC of inodes at every step of an apply: the tree and the record agree, and the retry ends applied", async () => {
  const outcomes: string[] = []
  for (let inodes = 0; ; inodes += 3) {
    const outcome = await trial({ inodes })
    outcomes.push(`${inodes}: ${outcome}`)
    if (outcome === "applied") break
    expect(inodes).toBeLessThan(300)
  }
  // The disk ran out at each step: the run directory, the staging copies, git's staging, the journal, the writes.
  const all = outcomes.join("\n")
  for (const step of ["mkdir", "copyfile", "could not stage the patch", "journal.tmp", "failed while writing"])
    expect(all).toContain(step)
}, 900_000)

test("ENOSPC of blocks at every step of an apply: the tree and the record agree, and the retry ends applied", async () => {
  const outcomes: string[] = []
  for (let bytes = 0; ; bytes += 200_000) {
    const outcome = await trial({ bytes })
    outcomes.push(`${bytes}: ${outcome}`)
    if (outcome === "applied") break
    expect(bytes).toBeLessThan(20_000_000)
  }
  const all = outcomes.join("\n")
  for (const step of ["copyfile", "could not stage the patch", "failed while writing"]) expect(all).toContain(step)
}, 900_000)

test("control: a tree holding the patch whole under a record that says waiting is answered applied from the files; one file off is refused", async () => {
  const small = await serveOnSmallDisk()
  try {
    // What the earlier version left when its end marker hit a full disk after the last write.
    const done = await applyOn(small)
    expect(done.isError, textOf(done)).toBeFalsy()
    const record = small.inside(`${world.home.paths.patchesDir}/${patch.id}.json`)
    const { appliedAt: _at, appliedDigest: _d, ...waiting } = (await Bun.file(record).json()) as Record<string, unknown>
    await writeFile(record, JSON.stringify(waiting, null, 2))
    const again = await applyOn(small)
    expect(again.isError, textOf(again)).toBeFalsy()
    expect(textOf(again)).toContain("found holding the patch whole")
    expect((await standing(small)).applied).toBe(true)

    await writeFile(record, JSON.stringify(waiting, null, 2))
    await writeFile(small.inside(`${repo}/gen/f7.txt`), "someone else's\n")
    const off = await applyOn(small)
    expect(off.isError).toBe(true)
    expect(textOf(off)).toContain("changed since the snapshot")
    expect(existsSync(small.inside(`${repo}/gen/f7.txt`))).toBe(true)
  } finally {
    await small.serve.close()
  }
}, 120_000)
