// The review tool through the real OpenCode on the scripted model: a read-only scout in an isolated
// worker's worktree (the change present), told the patch's files and the parent's brief, and held to a
// fixed output schema, so the verdict and its findings come back as `output`. Attack: the reviewer tries
// to write the patched file (the write tool, then a shell redirect): refused, the file and the patch's
// digest unchanged. An unknown or discarded patch_id is refused before any task; control: a real one starts.
import { describe, expect, test } from "bun:test"
import { existsSync, readFileSync, realpathSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { listPatches, readPatchRecord } from "../../src/workspace/patches/patches"
import { git } from "../patches/_repo"
import { done, read, shell, write } from "../helpers/steps"
import { battery, makeRepo, structuredOf, taskCount, textOf, type PatchOut } from "./_world"
import { APPROVE, BUGGY, CHANGES, SOUND, say } from "./_review"

/** What the attack's reviewer tries: the write tool, a shell redirect, a new file. */
const ATTACK = [write("calc.ts", "PWNED\n"), shell("echo PWNED >> calc.ts; echo x > new.ts"), write("new.ts", "x")]

const { world, mcp } = battery({})

/** An isolated worker's patch writing `content` to calc.ts, in a repository where calc.ts is SOUND. */
async function workerPatch(name: string, content: string): Promise<PatchOut> {
  const repo = await makeRepo(world)
  await writeFile(`${repo}/calc.ts`, SOUND)
  await git(repo, "add", "-A")
  await git(repo, "commit", "-qm", "calc")
  const quoted = content.replace(/\n/g, "\\n")
  world.model.setScript(name, { turns: [{ steps: [shell(`printf '${quoted}' > calc.ts && echo wrote`), done] }] })
  const out = structuredOf(
    await mcp.call("worker", { cwd: repo, task: `Edit. [script:${name}]`, isolation: "worktree" }),
  )
  expect(out.status).toBe("succeeded")
  return out.patch as PatchOut
}

/** Polls `probe` until it gives a value (a minute at most). */
async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await Bun.sleep(50)
  }
}

const treeOf = async (id: string) => (await readPatchRecord(world.home.paths.patchesDir, id))!.layout.tree

/** The requests that played a step of `script`. */
const requestsOf = (script: string) =>
  world.model.stepRequests().filter((request) => request.play.kind === "step" && request.play.script === script)

describe("a review", () => {
  test("approves a clean patch: the verdict as output, the brief carried the files and the schema", async () => {
    const patch = await workerPatch("clean", SOUND.replace("a + b", "b + a"))
    world.model.setScript("rev_ok", { turns: [{ steps: [read("calc.ts"), say(APPROVE)] }] })
    const out = structuredOf(
      await mcp.call("review", { patch_id: patch.patch_id, brief: "Is add right? [script:rev_ok]" }),
    )
    expect(out.status).toBe("succeeded")
    expect(out.output).toEqual({ verdict: "approve", findings: [] })
    expect(out.workspace).toBe(await treeOf(patch.patch_id))
    expect(out.reviewed).toEqual({ patch_id: patch.patch_id })
    const first = JSON.stringify(requestsOf("rev_ok")[0]!.body.messages)
    expect(first).toContain("calc.ts (modified, +1 -1)")
    expect(first).toContain("request_changes")
    // The worktree is admitted to the review's start only: a continue of it is refused, saying what to do.
    const again = await mcp.call("task_continue", { task_id: out.task_id, task: "More. [script:rev_ok]" })
    expect(again.isError).toBe(true)
    expect(textOf(again)).toContain("a review is not continued")
    expect(textOf(again)).toContain("next: Call review again")
  }, 120_000)

  test("requests changes on a planted bug, the finding at the file and line the reviewer read", async () => {
    const patch = await workerPatch("bug", BUGGY)
    world.model.setScript("rev_bug", { turns: [{ steps: [read("calc.ts"), say(CHANGES)] }] })
    const out = structuredOf(
      await mcp.call("review", { patch_id: patch.patch_id, brief: "Check add. [script:rev_bug]" }),
    )
    expect(out.status).toBe("succeeded")
    const output = out.output as { verdict: string; findings: { file: string; line: number }[] }
    expect(output.verdict).toBe("request_changes")
    const [finding] = output.findings
    // The line the finding names is the planted bug's line in the tree the reviewer ran in.
    const lines = readFileSync(`${await treeOf(patch.patch_id)}/${finding!.file}`, "utf8").split("\n")
    expect(lines[finding!.line - 1]).toContain("a - b")
    // The read came back with the changed file (what the reviewer saw before its verdict).
    expect(JSON.stringify(requestsOf("rev_bug")[1]!.body.messages)).toContain("a - b")
  }, 120_000)

  test("attack: the reviewer writes the patched file (write tool, shell): refused, file and digest unchanged", async () => {
    const patch = await workerPatch("target", BUGGY)
    const tree = await treeOf(patch.patch_id)
    world.model.setScript("rev_write", {
      turns: [{ steps: [...ATTACK, write(`${tree}/calc.ts`, "PWNED\n"), say(APPROVE)] }],
    })
    const out = structuredOf(await mcp.call("review", { patch_id: patch.patch_id, brief: "Look. [script:rev_write]" }))
    const calls = out.tool_calls as { tool: string; status: string; exit_code?: number }[]
    // The write tool is not offered to the read-only agent; the shell runs on a read-only tree and fails.
    expect(calls.filter((call) => call.tool === "write" || call.tool === "edit")).toEqual([])
    const shells = calls.filter((call) => call.tool === "sandbox_shell")
    expect(shells).toHaveLength(1)
    expect(shells[0]!.exit_code).not.toBe(0)
    expect(readFileSync(`${tree}/calc.ts`, "utf8")).toBe(BUGGY)
    expect(existsSync(`${tree}/new.ts`)).toBe(false)
    const shown = structuredOf(await mcp.call("patch_show", { patch_id: patch.patch_id }))
    expect(shown.digest).toBe(patch.digest)
    expect(shown.diff as string).not.toContain("PWNED")
    expect((shown.files as { path: string }[]).map((file) => file.path)).toEqual(["calc.ts"])
  }, 120_000)

  test("control: the same steps by an isolated worker land in its patch (the attack can write)", async () => {
    const repo = await makeRepo(world)
    world.model.setScript("writer", { turns: [{ steps: [...ATTACK, done] }] })
    const out = structuredOf(
      await mcp.call("worker", { cwd: repo, task: "Edit. [script:writer]", isolation: "worktree" }),
    )
    const shown = structuredOf(await mcp.call("patch_show", { patch_id: (out.patch as PatchOut).patch_id }))
    expect(shown.diff as string).toContain("PWNED")
    expect((shown.files as { path: string }[]).map((file) => file.path).sort()).toEqual(["calc.ts", "new.ts"])
  }, 120_000)
})

describe("a patch_id the review cannot use", () => {
  test("unknown, malformed or discarded: refused with next: before any task; a real one starts", async () => {
    const discarded = await workerPatch("gone", BUGGY)
    expect(structuredOf(await mcp.call("patch_discard", { patch_id: discarded.patch_id })).patch_id).toBeDefined()
    const live = await workerPatch("live", BUGGY)
    world.model.setScript("rev_idle", { turns: [{ steps: [say(APPROVE)] }] })
    const tasks = await taskCount(world)
    const refused = [
      ["patch_zz1_0123abcd", "No patch patch_zz1_0123abcd"],
      ["../etc", "patch"],
      [discarded.patch_id, "was discarded"],
    ] as const
    for (const [id, problem] of refused) {
      const result = await mcp.call("review", { patch_id: id, brief: "Look. [script:rev_idle]" })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain(problem)
      expect(textOf(result)).toContain("next:")
    }
    expect(await taskCount(world)).toBe(tasks)
    const ok = await mcp.call("review", { patch_id: live.patch_id, brief: "Look. [script:rev_idle]" })
    expect(ok.isError).toBeFalsy()
    expect(await taskCount(world)).toBe(tasks + 1)
  }, 120_000)

  test("a patch whose worker still runs is refused (its tree still changes); finished, it is reviewed", async () => {
    const repo = await makeRepo(world)
    world.model.setScript("slow", {
      turns: [{ steps: [{ ...shell("printf 'x\\n' > slow.ts"), delayMs: 4000 }, done] }],
    })
    const running = mcp.call("worker", { cwd: repo, task: "Edit. [script:slow]", isolation: "worktree" })
    const open = await until(async () => {
      const { records } = await listPatches(world.home.paths.patchesDir)
      return records.find((record) => record.source.workspace === realpathSync(repo) && record.status === "open")
    })
    const refused = await mcp.call("review", { patch_id: open.id, brief: "Look. [script:rev_idle]" })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toContain("its worker is still running")
    expect(textOf(refused)).toContain("next: Wait for the worker")
    expect(structuredOf(await running).status).toBe("succeeded")
    const after = structuredOf(await mcp.call("review", { patch_id: open.id, brief: "Look. [script:rev_idle]" }))
    expect(after.output).toEqual({ verdict: "approve", findings: [] })
  }, 120_000)
})
