// patch_apply killed for real: the compiled `serve` applying a 3,053-path patch (3,050 new files, one
// ~90 MB file, one modified and one deleted) is SIGKILLed at points picked by watching its run
// directory and the repository: during staging, mid-rename, mid-copy of the large file, and during
// the completion of a killed apply by the next process. Afterwards doctor names an apply killed while
// writing; the next process (patch_apply completing it, patch_discard rolling it back) leaves the
// repository byte for byte after or before, with no temporary anywhere in it or the state and cache
// dirs, and no staging left. Control: the same apply without a fault succeeds; and each kill really
// left the repository half-written (neither before nor after) until the next process.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { existsSync, readdirSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import type { DoctorContext } from "../../src/doctor/check"
import { applies } from "../../src/doctor/applies"
import { tempFor } from "../../src/workspace/write-step/apply-journal"
import { processesOf, processesWorkingIn } from "../helpers/leftovers"
import { connectStdio, textOf } from "../helpers/mcp"
import { git } from "../patches/_repo"
import { stopWorld, type Connected, type World } from "../mcp/_setup"
import { listing, namesBelow, STAGING, TEMPS } from "./_tree"
import { startPatchWorld } from "./_patch-world"

const FILES = 3050
const MAKE = `mkdir -p gen && for i in $(seq 1 ${FILES}); do echo "generated $i" > gen/f$i.txt; done && { printf '\\0'; seq 1 12000000; } > big.bin && printf 'changed\\n' >> README.md && rm src/tally.ts && echo made`

let world: World
let mcp: Connected
let repo: string
let patch: { id: string; digest: string; lane: string }
let before: string[]
let after: string[]

beforeAll(async () => {
  ;({ world, mcp, repo, before, patch } = await startPatchWorld("large", MAKE))
}, 300_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

const apply = (serve: Awaited<ReturnType<typeof connectStdio>>) =>
  serve.client.callTool(
    { name: "patch_apply", arguments: { patch_id: patch.id, digest: patch.digest } },
    {
      timeout: 300_000,
    },
  ) as Promise<CallToolResult>

/** A fresh `serve` (the next process) doing one call, then gone. */
async function nextProcess(tool: string): Promise<CallToolResult> {
  const serve = await connectStdio(world.home.env)
  try {
    const args = tool === "patch_apply" ? { patch_id: patch.id, digest: patch.digest } : { patch_id: patch.id }
    return (await serve.client.callTool(
      { name: tool, arguments: args },
      {
        timeout: 300_000,
      },
    )) as CallToolResult
  } finally {
    await serve.close()
  }
}

/**
 * The repository back as it was (HEAD never moved): tracked files restored, the rest removed, the note
 * rewritten; and the patch waiting again, since an applied patch's second apply writes nothing.
 */
async function reset() {
  await git(repo, "reset", "-q", "--hard")
  await git(repo, "clean", "-fdxq")
  await writeFile(`${repo}/notes.txt`, "untracked before the task\n")
  expect(listing(repo)).toEqual(before)
  const file = `${world.home.paths.patchesDir}/${patch.id}.json`
  if (!existsSync(file)) return
  const {
    appliedAt: _at,
    appliedDigest: _digest,
    ...waiting
  } = (await Bun.file(file).json()) as Record<string, unknown>
  await writeFile(file, JSON.stringify(waiting, null, 2))
}

const runs = () => readdirSync(patch.lane).filter((name) => STAGING.test(name))

/** No temporary in the repository or the state and cache dirs; no staging in the lane. */
function expectClean() {
  expect(namesBelow(repo, TEMPS)).toEqual([])
  for (const dir of [world.home.paths.stateDir, `${world.home.paths.worktreesDir}/..`])
    expect(namesBelow(dir, TEMPS)).toEqual([])
  expect(runs()).toEqual([])
}

/** A `serve` applying the patch, SIGKILLed once `ready` holds (polled); then no write step of it lives on. */
async function killWhen(ready: () => boolean): Promise<void> {
  const serve = await connectStdio(world.home.env)
  let ended: CallToolResult | undefined
  const call = apply(serve).then(
    (result) => {
      ended = result
    },
    () => undefined, // the connection dies with the server
  )
  const deadline = Date.now() + 240_000
  while (!ready()) {
    if (ended) throw new Error(`the apply ended before the kill point: ${textOf(ended).slice(0, 600)}`)
    if (Date.now() > deadline) throw new Error("the kill point was never reached")
    await Bun.sleep(2)
  }
  process.kill(serve.pid, "SIGKILL")
  await call
  await serve.close().catch(() => undefined)
  const stepGone = Date.now() + 15_000
  // The step runs in bwrap with an empty environment and the sandbox's HOME: found by its directory.
  const steps = async () => [
    ...(await processesOf(world.home.root)).filter((p) => p.command.includes("__apply-step")),
    ...(await processesWorkingIn(world.home.root, "__apply-step")),
  ]
  while ((await steps()).length) {
    if (Date.now() > stepGone) throw new Error("the write step outlived its server")
    await Bun.sleep(100)
  }
}

/** A fresh `serve`'s patch_apply finishes the job: the patch applied whole, and nothing left behind. */
async function expectNextApplyWhole() {
  const result = await nextProcess("patch_apply")
  expect(result.isError).toBeFalsy()
  expect(listing(repo)).toEqual(after)
  expectClean()
}

const doctor = async () => (await applies({ paths: world.home.paths } as unknown as DoctorContext))[0]!

test("control: the same apply with no fault succeeds, every file written, nothing left behind", async () => {
  const serve = await connectStdio(world.home.env)
  try {
    const result = await apply(serve)
    expect(result.isError).toBeFalsy()
    expect(textOf(result)).toContain(`${FILES + 3} files written`)
  } finally {
    await serve.close()
  }
  after = listing(repo)
  expect(after).not.toEqual(before)
  expect(after.filter((line) => line.startsWith("gen/f")).length).toBe(FILES)
  expectClean()
  await reset()
}, 300_000)

test("SIGKILL during staging: nothing was written; the next patch_apply applies the patch whole", async () => {
  const staging = () =>
    runs().some((run) => existsSync(`${patch.lane}/${run}/tree`) && !existsSync(`${patch.lane}/${run}/journal.json`))
  await killWhen(staging)
  expect(listing(repo)).toEqual(before)
  expect((await doctor()).status).toBe("pass")
  expect(runs().length).toBe(1) // staging left by the kill, removed by the next apply
  await expectNextApplyWhole()
  await reset()
}, 300_000)

test("SIGKILL mid-rename: doctor names it; the next patch_apply completes the patch from where it stopped", async () => {
  await killWhen(() => existsSync(`${repo}/gen`) && readdirSync(`${repo}/gen`).length >= 1000)
  const half = listing(repo)
  expect(half).not.toEqual(before)
  expect(half).not.toEqual(after)
  const found = await doctor()
  expect(found.status).toBe("fail")
  expect(found.detail).toContain(`patch ${patch.id}`)
  expect(found.fix).toContain("patch_discard")
  await expectNextApplyWhole()
  expect((await doctor()).status).toBe("pass")
  await reset()
}, 300_000)

test("SIGKILL of the process completing a killed apply: the journal stays, and the third process finishes the job", async () => {
  const gen = () => (existsSync(`${repo}/gen`) ? readdirSync(`${repo}/gen`).length : 0)
  await killWhen(() => gen() >= 1000)
  const written = gen()
  expect(written, "the first kill landed after the last write").toBeLessThan(FILES - 100)
  // The next patch_apply completes the killed apply from its staged copies: killed halfway through the rest.
  await killWhen(() => gen() >= written + Math.floor((FILES - written) / 2))
  expect(listing(repo)).not.toEqual(before)
  expect((await doctor()).status).toBe("fail")
  await expectNextApplyWhole()
  await reset()
}, 300_000)

test("SIGKILL mid-copy of the large file: the partial temporary and every write go with patch_discard, staging too", async () => {
  let temp = ""
  await killWhen(() => {
    const [run] = runs()
    if (!run || !existsSync(`${patch.lane}/${run}/journal.json`)) return false
    temp = `${repo}/${tempFor(`${patch.lane}/${run}`, "big.bin", "write")}`
    return existsSync(temp)
  })
  // The kill fell inside the copy: its partial temporary is there for the next process to find.
  expect(existsSync(temp)).toBe(true)
  const half = listing(repo)
  expect(half).not.toEqual(before)
  expect(half).not.toEqual(after)
  expect((await doctor()).status).toBe("fail")
  const result = await nextProcess("patch_discard")
  expect(result.isError).toBeFalsy()
  expect(existsSync(temp)).toBe(false)
  expect(listing(repo)).toEqual(before)
  expectClean()
  expect((await doctor()).status).toBe("pass")
  expect(existsSync(`${world.home.paths.patchesDir}/${patch.id}.json`)).toBe(false)
}, 300_000)
