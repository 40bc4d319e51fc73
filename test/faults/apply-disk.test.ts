// patch_apply on a full disk: the compiled `serve` runs in a mount namespace where the repository is a
// small tmpfs (a copy of it, same paths, same HEAD) filled until a 6 MB file of the patch no longer
// fits. The copy fails with ENOSPC mid-write: the repository is byte for byte as before, and no
// temporary (the partial copy) stays to keep the disk full. Control: the same apply with room succeeds.
// Then staging: patch_discard and the reuse of a lane remove every `apply-*` directory in it.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { existsSync, readdirSync, statSync } from "node:fs"
import { cp, mkdir, rm, symlink } from "node:fs/promises"
import type { DoctorContext } from "../../src/doctor/check"
import { applies } from "../../src/doctor/applies"
import { spawn } from "../../src/util/process"
import { BINARY, connectStdio, textOf } from "../helpers/mcp"
import { connect, makeRepo, startWorld, stopWorld, structured, type Connected, type World } from "../mcp/_setup"
import { listing, namesBelow, STAGING, TEMPS } from "./_tree"

const BLOB = 6_000_000
const MAKE = `mkdir -p gen && for i in $(seq 1 20); do echo "generated $i" > gen/f$i.txt; done && head -c ${BLOB} /dev/urandom > blob.bin && printf 'changed\\n' >> README.md && echo made`

let world: World
let mcp: Connected

beforeAll(async () => {
  world = await startWorld({
    blob: { turns: [{ steps: [{ tool: "sandbox_shell", args: { command: MAKE } }, { text: "Made the files." }] }] },
    small: {
      turns: [
        { steps: [{ tool: "write", args: { filePath: "note.txt", content: "a note\n" } }, { text: "Wrote it." }] },
      ],
    },
  })
  mcp = await connect(world, { syncBudgetMs: 3000 })
}, 120_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

interface Patch {
  patch_id: string
  digest: string
}

/** An isolated worker's patch of `repo`, run to its end. */
async function workerPatch(repo: string, script: string): Promise<Patch> {
  let out = structured(
    await mcp.client.callTool({
      name: "worker",
      arguments: { cwd: repo, task: `Work. [script:${script}]`, isolation: "worktree" },
    }),
  )
  while (out.status === "running") {
    await Bun.sleep(500)
    out = structured(await mcp.client.callTool({ name: "task_result", arguments: { task_id: out.task_id } }))
  }
  const patch = out.patch as Patch | undefined
  expect(patch?.patch_id, JSON.stringify(out).slice(0, 600)).toBeString()
  return patch!
}

const laneOf = async (id: string) =>
  ((await Bun.file(`${world.home.paths.patchesDir}/${id}.json`).json()) as { layout: { dir: string } }).layout.dir

/**
 * patch_apply by a `serve` whose view of `repo` is a 16 MiB tmpfs holding a copy of it, filled to
 * leave `free` bytes when given; answers the call and what the repository holds in that namespace.
 */
async function applyOnTmpfs(repo: string, patch: Patch, free?: number) {
  const source = `${repo}.src`
  await rm(source, { recursive: true, force: true })
  await cp(repo, source, { recursive: true, verbatimSymlinks: true })
  const avail = `$(df --output=avail -B1 ${repo} | tail -1)`
  const fill = free === undefined ? "" : `head -c $((${avail} - ${free})) /dev/zero > ${repo}/.git/fill; `
  const script = `cp -a ${source}/. ${repo}/ && ${fill}exec "$@"`
  const serve = await connectStdio(world.home.env, [
    "/usr/bin/bwrap",
    "--dev-bind",
    "/",
    "/",
    "--size",
    "16777216",
    "--tmpfs",
    repo,
    "--die-with-parent",
    "--",
    "/bin/bash",
    "-c",
    script,
    "serve",
    BINARY,
    "serve",
  ])
  try {
    const child = Number((await Bun.file(`/proc/${serve.pid}/task/${serve.pid}/children`).text()).trim().split(" ")[0])
    const inside = `/proc/${child}/root${repo}`
    const before = listing(inside)
    const result = (await serve.client.callTool(
      { name: "patch_apply", arguments: { patch_id: patch.patch_id, digest: patch.digest } },
      { timeout: 120_000 },
    )) as CallToolResult
    return {
      result,
      before,
      after: listing(inside),
      temps: namesBelow(inside, TEMPS),
      blob: existsSync(`${inside}/blob.bin`) ? statSync(`${inside}/blob.bin`).size : -1,
    }
  } finally {
    await serve.close()
    await rm(source, { recursive: true, force: true })
  }
}

test("ENOSPC mid-apply: the repository is as before and no temporary stays; control: with room the same apply succeeds", async () => {
  const repo = await makeRepo(world)
  const host = listing(repo)
  const patch = await workerPatch(repo, "blob")

  const full = await applyOnTmpfs(repo, patch, 3_000_000)
  expect(full.before).toEqual(host)
  expect(full.result.isError).toBe(true)
  expect(textOf(full.result)).toContain("rolled back")
  expect(textOf(full.result)).toContain("next:")
  expect(full.after).toEqual(full.before)
  expect(full.temps).toEqual([])

  const roomy = await applyOnTmpfs(repo, patch)
  expect(roomy.result.isError).toBeFalsy()
  expect(roomy.blob).toBe(BLOB)
  expect(roomy.after).not.toEqual(roomy.before)
  expect(roomy.temps).toEqual([])
  // Neither namespace wrote to the host's repository, and neither left staging in the lane.
  expect(listing(repo)).toEqual(host)
  expect(readdirSync(await laneOf(patch.patch_id)).filter((name) => STAGING.test(name))).toEqual([])
  expect(
    (await mcp.client.callTool({ name: "patch_discard", arguments: { patch_id: patch.patch_id } })).isError,
  ).toBeFalsy()
}, 300_000)

test("staging left in a lane goes with patch_apply, patch_discard and the lane's reuse, garbage journals too; control: it is there until then", async () => {
  const repo = await makeRepo(world)
  const first = await workerPatch(repo, "small")
  const lane = await laneOf(first.patch_id)
  // What a process killed before any journal (or an older version) leaves: a run directory with a staged tree.
  await mkdir(`${lane}/apply-0badc0de/tree`, { recursive: true })
  await Bun.write(`${lane}/apply-0badc0de/tree/big`, "x".repeat(100_000))
  expect(readdirSync(lane)).toContain("apply-0badc0de")
  // Garbage journals (no JSON, the wrong shape, a FIFO, a link to /dev/zero) are no journal: doctor
  // reads past them without blocking, and the next patch_apply removes their staging and applies.
  const garbage = ["apply-00000001", "apply-00000002", "apply-00000003", "apply-00000004"]
  for (const name of garbage) await mkdir(`${lane}/${name}`)
  await Bun.write(`${lane}/apply-00000001/journal.json`, "{not json")
  await Bun.write(`${lane}/apply-00000002/journal.json`, JSON.stringify({ workspace: repo, files: "all" }))
  await spawn(["mkfifo", `${lane}/apply-00000003/journal.json`]).exited
  await symlink("/dev/zero", `${lane}/apply-00000004/journal.json`)
  expect((await applies({ paths: world.home.paths } as unknown as DoctorContext))[0]!.status).toBe("pass")
  const applied = await mcp.client.callTool({
    name: "patch_apply",
    arguments: { patch_id: first.patch_id, digest: first.digest },
  })
  expect(applied.isError).toBeFalsy()
  expect(await Bun.file(`${repo}/note.txt`).text()).toBe("a note\n")
  expect(readdirSync(lane).filter((name) => STAGING.test(name))).toEqual([])
  await mkdir(`${lane}/apply-0badc0de/tree`, { recursive: true })
  expect(
    (await mcp.client.callTool({ name: "patch_discard", arguments: { patch_id: first.patch_id } })).isError,
  ).toBeFalsy()
  expect(existsSync(`${lane}/apply-0badc0de`)).toBe(false)

  // A lane freed without passing through discard's emptying (staging planted after it) is emptied on reuse.
  await mkdir(`${lane}/apply-0badc0de/tree`, { recursive: true })
  const second = await workerPatch(repo, "small")
  expect(await laneOf(second.patch_id)).toBe(lane)
  expect(existsSync(`${lane}/apply-0badc0de`)).toBe(false)
  expect(
    (await mcp.client.callTool({ name: "patch_discard", arguments: { patch_id: second.patch_id } })).isError,
  ).toBeFalsy()
}, 300_000)
