// Attacks on patch_apply through the real OpenCode on the scripted model: a directory swapped for a
// symlink to HOME (renameat2 exchange) while patch_apply writes, by an in-place worker (its writer state
// conflicts along the path) and by a plain process no lock stops (the write step's mount namespace
// holds); and patches that smuggle links and names. Each beside a control that shows it is real.
import { beforeAll, describe, expect, test } from "bun:test"
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs"
import { mkdir, rm, symlink, writeFile } from "node:fs/promises"
import { WriterLocks } from "../../src/engine/capacity/locks"
import { runSandboxed, hostContext } from "../../src/sandbox"
import { spawn } from "../../src/util/process"
import { selfStep } from "../../src/util/self"
import { stepSandbox } from "../../src/workspace/apply/apply"
import { writeTargets, type StepRequest } from "../../src/workspace/write-step/apply-step"
import { blobId } from "../../src/workspace/git-objects"
import { git } from "../patches/_repo"
import { battery, makeRepo, scratch, structuredOf, textOf } from "./_world"
import { shell } from "../helpers/steps"

const ORIGINAL = "# the user's own .bashrc\n"
const PWNED = "PWNED\n"
/** patch_apply calls per race. */
const CALLS = 30

const { world, mcp } = battery({})
let home: string

beforeAll(() => {
  home = world.home.root
})

const done = { text: "Done." }

/** Python exchanging two paths (one atomic renameat2 RENAME_EXCHANGE each time) for `seconds`. */
const swapCode = (a: string, b: string, seconds: number) => `import ctypes,time
l=ctypes.CDLL(None,use_errno=True);e=time.time()+${seconds}
while time.time()<e: l.renameat2(-100,b"${a}",-100,b"${b}",2)`

async function resetHome() {
  for (const name of readdirSync(home)) if (name.startsWith(".oc-orch-")) await rm(`${home}/${name}`, { force: true })
  await writeFile(`${home}/.bashrc`, ORIGINAL)
}

/** Nothing written to HOME: the .bashrc as it was, no temporary file beside it. */
function expectHomeUntouched() {
  expect(readFileSync(`${home}/.bashrc`, "utf8")).toBe(ORIGINAL)
  expect(readdirSync(home).filter((name) => name.startsWith(".oc-orch-"))).toEqual([])
}

/** A process's state letter from /proc (T: stopped), or undefined once it is gone. */
const stateOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").at(-1)?.[0]
  } catch {
    return undefined // gone
  }
}

async function until(condition: () => boolean, ms = 60_000) {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await Bun.sleep(50)
  }
}

interface Patch {
  patch_id: string
  digest: string
  summary: string
}

/** An isolated worker's patch made by `command` in a repository prepared by `arrange`. */
async function workerPatch(
  name: string,
  command: string,
  arrange?: (repo: string) => Promise<void>,
  status = "succeeded",
): Promise<{ repo: string; patch: Patch; text: string }> {
  const repo = await makeRepo(world)
  if (arrange) {
    await arrange(repo)
    await git(repo, "add", "-A")
    await git(repo, "commit", "-qm", "arranged")
  }
  world.model.setScript(name, { turns: [{ steps: [shell(command), done] }] })
  const result = await mcp.call("worker", {
    cwd: repo,
    task: `Make the change. [script:${name}]`,
    isolation: "worktree",
  })
  const out = structuredOf(result)
  expect(out.status).toBe(status)
  expect(out.patch).toBeDefined()
  return { repo, patch: out.patch as Patch, text: textOf(result) }
}

/**
 * A repository with sub/d/keep.txt and a ready patch that adds sub/d/.bashrc: a shell's rc file runs on
 * its own, so the worker ends needs_review and every apply below passes allow_autorun.
 */
const bashrcPatch = (name: string) =>
  workerPatch(
    name,
    `printf 'PWNED\\n' > sub/d/.bashrc && echo wrote`,
    async (repo) => {
      await mkdir(`${repo}/sub/d`, { recursive: true })
      await writeFile(`${repo}/sub/d/keep.txt`, "keep\n")
    },
    "needs_review",
  )

const apply = (patch: Patch, extra: Record<string, unknown> = {}) =>
  mcp.call("patch_apply", { patch_id: patch.patch_id, digest: patch.digest, allow_autorun: true, ...extra })

describe("a directory swapped for a symlink to HOME while patch_apply writes", () => {
  test("control: with nothing swapping, the patch applies in a plain repository", async () => {
    await resetHome()
    const { repo, patch } = await bashrcPatch("bashrc_plain")
    const applied = await apply(patch)
    expect(applied.isError).toBeFalsy()
    expect(readFileSync(`${repo}/sub/d/.bashrc`, "utf8")).toBe(PWNED)
    expectHomeUntouched()
  }, 120_000)

  test(`an in-place worker in <repo>/sub swapping sub/d: all ${CALLS} patch_apply calls on <repo> are refused, naming the holder; nothing reaches HOME`, async () => {
    await resetHome()
    const { repo, patch } = await bashrcPatch("bashrc_worker_patch")
    world.model.setScript("swap_worker", {
      turns: [
        {
          steps: [
            shell(`ln -s ${home} dlink && touch started && python3 -c '${swapCode("d", "dlink", 20)}'; echo swapped`),
            done,
          ],
        },
      ],
    })
    const worker = mcp.call("worker", { cwd: `${repo}/sub`, task: "Swap. [script:swap_worker]" })
    await until(() => existsSync(`${repo}/sub/started`))
    const answers = []
    for (let i = 0; i < CALLS; i++) answers.push(await apply(patch))
    const finished = structuredOf(await worker)
    for (const answer of answers) {
      expect(answer.isError).toBe(true)
      expect(textOf(answer)).toContain(`${repo} overlaps ${repo}/sub, which is held by task ${finished.task_id}`)
      expect(textOf(answer)).toContain("next: ")
    }
    expectHomeUntouched()
  }, 180_000)

  test("the other way round: while a patch_apply holds <repo>, an in-place worker in <repo>/sub is refused naming it; released, it runs", async () => {
    const repo = realpathSync(await makeRepo(world))
    await mkdir(`${repo}/sub`)
    world.model.setScript("sub_worker", { turns: [{ steps: [shell("echo hi > hi.txt && echo wrote"), done] }] })
    const locks = new WriterLocks(world.home.paths.locksDir)
    expect((await locks.tryAcquire(repo, "patch_held_1")).acquired).toBe(true)
    try {
      const refused = await mcp.call("worker", { cwd: `${repo}/sub`, task: "Write. [script:sub_worker]" })
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toContain(`${repo}/sub overlaps ${repo}, which is held by task patch_held_1`)
      expect(existsSync(`${repo}/sub/hi.txt`)).toBe(false)
    } finally {
      await locks.clear(repo, "patch_held_1")
    }
    expect(
      structuredOf(await mcp.call("worker", { cwd: `${repo}/sub`, task: "Write. [script:sub_worker]" })).status,
    ).toBe("succeeded")
    expect(readFileSync(`${repo}/sub/hi.txt`, "utf8")).toBe("hi\n")
  }, 120_000)

  test(`a plain process swapping sub/d (no writer state to stop it): ${CALLS} patch_apply calls, nothing reaches HOME`, async () => {
    await resetHome()
    const { repo, patch } = await bashrcPatch("bashrc_plain_race")
    await symlink(home, `${repo}/sub/dlink`)
    const swap = spawn(["python3", "-c", swapCode(`${repo}/sub/d`, `${repo}/sub/dlink`, 300)])
    const outcomes = { applied: 0, refused: 0, failed: 0, lost: 0 }
    try {
      await until(() => lstatSync(`${repo}/sub/d`, { throwIfNoEntry: false })?.isSymbolicLink() === true)
      for (let i = 0; i < CALLS; i++) {
        const answer = await apply(patch)
        // Hold the swapper still to look: the real directory is under one of the two names.
        process.kill(swap.pid, "SIGSTOP")
        // A signal is not a stop: on another core the swapper may finish one more exchange first.
        await until(() => stateOf(swap.pid) === "T", 5_000)
        try {
          expectHomeUntouched()
          const real = lstatSync(`${repo}/sub/d`).isDirectory() ? `${repo}/sub/d` : `${repo}/sub/dlink`
          if (!answer.isError) {
            outcomes.applied++
            // Known gap: under a swapper the write step can land the file in the sandbox's own empty HOME
            // and still find it there afterwards; it is lost, never outside. Counted, not hidden.
            if (!existsSync(`${real}/.bashrc`)) outcomes.lost++
            else expect(readFileSync(`${real}/.bashrc`, "utf8")).toBe(PWNED)
          } else if (textOf(answer).includes("patch_apply refused")) outcomes.refused++
          else outcomes.failed++
          // A rollback under a swapper may leave the new file inside the repository: never outside it.
          for (const name of readdirSync(real)) if (name !== "keep.txt") await rm(`${real}/${name}`, { force: true })
        } finally {
          process.kill(swap.pid, "SIGCONT")
        }
      }
    } finally {
      await swap.kill(500)
    }
    expect(outcomes.applied + outcomes.refused + outcomes.failed).toBe(CALLS)
    expectHomeUntouched()
  }, 300_000)

  /** A staged sub/d/.bashrc and the write step's request for it, in a fresh repository whose sub/d is a symlink to HOME. */
  async function swappedRequest(): Promise<StepRequest> {
    const repo = await makeRepo(world)
    await mkdir(`${repo}/sub`)
    await symlink(home, `${repo}/sub/d`)
    const run = realpathSync(await scratch(world))
    await mkdir(`${run}/tree/sub/d`, { recursive: true })
    await writeFile(`${run}/tree/sub/d/.bashrc`, PWNED)
    return { workspace: repo, run, files: [{ path: "sub/d/.bashrc", newMode: "100644", newOid: blobId(PWNED) }] }
  }

  test("the write step alone, no check before it: confined it reaches nothing; unconfined (the control) it writes through to HOME", async () => {
    await resetHome()
    const request = await swappedRequest()
    const self = selfStep()
    const plan = stepSandbox(request, hostContext(world.runtime.flags), [
      ...self.programs,
      realpathSync(import.meta.dir),
    ])
    const confined = await runSandboxed(plan, [self.command[0]!, `${realpathSync(import.meta.dir)}/_write-step.ts`], {
      timeoutMs: 60_000,
      maxOutputBytes: 64 * 1024,
      stdin: JSON.stringify(request),
    })
    expect(confined.exitCode).toBe(0)
    expect(JSON.parse(confined.stdout)).toMatchObject({ ok: false })
    expectHomeUntouched()
    // The same function on the host follows the symlink: the .bashrc is overwritten (then removed by its rollback).
    await writeTargets(request.workspace, request.run, request.files).catch(() => undefined)
    expect(existsSync(`${home}/.bashrc`) ? readFileSync(`${home}/.bashrc`, "utf8") : "gone").not.toBe(ORIGINAL)
    await resetHome()
  }, 60_000)

  test("control: the unconfined write step against the same swapper lands in HOME", async () => {
    await resetHome()
    const request = await swappedRequest()
    const sub = `${request.workspace}/sub`
    await rm(`${sub}/d`)
    await mkdir(`${sub}/d`)
    await symlink(home, `${sub}/dlink`)
    const swap = spawn(["python3", "-c", swapCode(`${sub}/d`, `${sub}/dlink`, 90)])
    let landed = 0
    try {
      // The swapper is running once sub/d has been seen as the symlink; until then nothing can land.
      await until(() => lstatSync(`${sub}/d`, { throwIfNoEntry: false })?.isSymbolicLink() === true)
      for (let i = 0; i < 2000 && !landed; i++) {
        await writeTargets(request.workspace, request.run, request.files).catch(() => undefined)
        if (!existsSync(`${home}/.bashrc`) || readFileSync(`${home}/.bashrc`, "utf8") !== ORIGINAL) landed++
      }
    } finally {
      await swap.kill(500)
      await resetHome()
    }
    expect(landed).toBeGreaterThan(0)
  }, 120_000)
})

describe("patches that smuggle links", () => {
  test("links out of the repository (absolute, climbing, through another link, into .git) and a file turned into a link are refused, named with their targets; allow_links writes them", async () => {
    await resetHome()
    const command = [
      `ln -s ${home}/.ssh/id_rsa key`,
      "ln -s ../../../../../../../../etc/passwd passwd",
      "mkdir sub && ln -s .. sub/up && ln -s sub/up/../outside esc",
      "ln -s .git/config cfg",
      "rm README.md && echo notes > notes.txt && ln -s notes.txt README.md",
      "echo linked",
    ].join(" && ")
    // Links at the root that are not source by their names: the worker ends needs_review, the rule named.
    const { repo, patch, text } = await workerPatch("links_out", command, undefined, "needs_review")
    // The worker's result names every link with its target.
    expect(text).toContain(`→ ${home}/.ssh/id_rsa)`)
    expect(patch.summary).toMatch(/^README\.md \(modified, .*file → symlink, → notes\.txt\)$/m)
    expect(patch.summary).toMatch(/^sub\/up \(added, .*symlink, → \.\.\)$/m)
    const refused = await apply(patch)
    expect(refused.isError).toBe(true)
    const message = textOf(refused)
    expect(message).toContain(`key → ${home}/.ssh/id_rsa (it points to an absolute path)`)
    expect(message).toContain("passwd → ../../../../../../../../etc/passwd (it points outside the repository)")
    expect(message).toContain("esc → sub/up/../outside (it points outside the repository (through the link sub/up))")
    expect(message).toContain("cfg → .git/config (it points into Git metadata)")
    expect(message).toContain("README.md → notes.txt (it turns a file into a link)")
    expect(message).toContain("next: ")
    expect(message).toContain("allow_links: true")
    expect(readFileSync(`${repo}/README.md`, "utf8")).toBe("# fixture\n")
    expect(existsSync(`${repo}/key`) || existsSync(`${repo}/notes.txt`)).toBe(false)
    // Control: the caller who read the targets can still have them.
    const allowed = await apply(patch, { allow_links: true })
    expect(allowed.isError).toBeFalsy()
    expect(readlinkSync(`${repo}/key`)).toBe(`${home}/.ssh/id_rsa`)
    expect(readlinkSync(`${repo}/esc`)).toBe("sub/up/../outside")
    expect(readlinkSync(`${repo}/README.md`)).toBe("notes.txt")
  }, 120_000)

  test("control: links that stay inside the repository, chained ones too, apply without allow_links, exactly", async () => {
    const command = [
      "ln -s README.md readme",
      "mkdir -p docs/deep && ln -s ../../README.md docs/deep/readme",
      "ln -s docs dlink",
      "ln -s dlink/deep/readme chained",
      "echo linked",
    ].join(" && ")
    const { repo, patch } = await workerPatch("links_in", command, undefined, "needs_review")
    const applied = await apply(patch)
    expect(applied.isError).toBeFalsy()
    expect(readlinkSync(`${repo}/readme`)).toBe("README.md")
    expect(readlinkSync(`${repo}/docs/deep/readme`)).toBe("../../README.md")
    expect(readlinkSync(`${repo}/chained`)).toBe("dlink/deep/readme")
    expect(readFileSync(`${repo}/chained`, "utf8")).toBe("# fixture\n")
  }, 120_000)
})

describe("patches that smuggle names", () => {
  test("a name with a newline forges no line in the result, patch_show or task_list; it is shown escaped and refused to write", async () => {
    const { repo, patch, text } = await workerPatch(
      "newline_name",
      `printf x > "$(printf 'evil\\nREADME.md (modified)')" && echo made`,
      undefined,
      "needs_review",
    )
    const forged = (output: string) => output.split("\n").filter((line) => line.startsWith("README.md"))
    expect(patch.summary).toContain('"evil\\u000aREADME.md (modified)" (added')
    expect(forged(text)).toEqual([])
    const shown = await mcp.call("patch_show", { patch_id: patch.patch_id })
    expect(forged(textOf(shown))).toEqual([])
    const missing = await mcp.call("patch_show", { patch_id: patch.patch_id, file: "README.md" })
    expect(missing.isError).toBe(true)
    expect(forged(textOf(missing))).toEqual([])
    expect(forged(textOf(await mcp.call("task_list", { cwd: repo })))).toEqual([])
    const refused = await apply(patch)
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toContain('"evil\\u000aREADME.md (modified)": its name holds a control character')
    expect(readdirSync(repo).filter((name) => name.startsWith("evil"))).toEqual([])
  }, 120_000)

  test("names of 254 and 255 bytes apply, new and modified: the temporary name always fits", async () => {
    const [n254, n255, deep] = ["a".repeat(254), "b".repeat(255), "c".repeat(255)]
    const { repo, patch } = await workerPatch(
      "long_names",
      `echo one > ${n254} && echo two > ${n255} && echo edited >> long/${deep} && echo made`,
      async (dir) => {
        await mkdir(`${dir}/long`)
        await writeFile(`${dir}/long/${deep}`, "base\n")
      },
      // Root-level names with no source extension: named by the autorun rule, so needs_review.
      "needs_review",
    )
    // Control: the temporary name beside the target the old scheme used would not fit a name this long.
    expect(Buffer.byteLength(`${n254}.oc-orch-00000000`)).toBeGreaterThan(255)
    const applied = await apply(patch)
    expect(applied.isError).toBeFalsy()
    expect(readFileSync(`${repo}/${n254}`, "utf8")).toBe("one\n")
    expect(readFileSync(`${repo}/${n255}`, "utf8")).toBe("two\n")
    expect(readFileSync(`${repo}/long/${deep}`, "utf8")).toBe("base\nedited\n")
    expect(readdirSync(repo).filter((name) => name.startsWith(".oc-orch-"))).toEqual([])
  }, 120_000)
})
