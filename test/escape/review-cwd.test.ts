// review's cwd form through the real OpenCode on the scripted model: a read-only scout in the workspace
// itself, told the changed files and the diff against HEAD of its staged, unstaged and untracked changes,
// held to the review schema, its result naming the cwd and the files. Attack: the reviewer writes in cwd
// (the write tool, a shell redirect, git add): refused, git status and diff identical before and after;
// control: the same steps by an in-place worker change the tree. The diff is git's, not the repository's
// programs' (diff.external, textconv; control: host git runs them). Refused with next: before any task:
// both forms or neither, a clean tree, a directory outside git or with a planted `.git`, an inadmissible
// cwd. A FIFO in the tree does not hold the review up; a diff git could not make whole is said to be cut.
import { describe, expect, test } from "bun:test"
import { existsSync, readFileSync, realpathSync } from "node:fs"
import { mkdir, rm, writeFile } from "node:fs/promises"
import { run } from "../../src/util/process"
import { git } from "../patches/_repo"
import { done, read, shell, write } from "../helpers/steps"
import { battery, makeRepo, scratch, structuredOf, taskCount, textOf } from "./_world"
import { APPROVE, BUGGY, CHANGES, SOUND, say } from "./_review"

/** What the attack's reviewer tries: the write tool, a shell redirect and git's index, a new file. */
const ATTACK = [
  write("calc.ts", "PWNED\n"),
  shell("echo PWNED >> calc.ts; git add -A; echo x > new.ts"),
  write("new.ts", "x"),
]

const { world, mcp } = battery({})

/** A repository where calc.ts is committed SOUND, then `edit` writes uncommitted changes. */
async function dirty(edit: (repo: string) => Promise<void>): Promise<string> {
  const repo = await makeRepo(world)
  await writeFile(`${repo}/calc.ts`, SOUND)
  await git(repo, "add", "-A")
  await git(repo, "commit", "-qm", "calc")
  await edit(repo)
  return repo
}

/** Everything git says of the tree's uncommitted state: status, the worktree's and the index's diff. */
const gitState = async (repo: string) =>
  Promise.all([
    git(repo, "--no-optional-locks", "status", "--porcelain=v2", "-z", "--untracked-files=all"),
    git(repo, "--no-optional-locks", "diff", "--binary", "HEAD"),
    git(repo, "--no-optional-locks", "diff", "--binary", "--cached"),
  ])

/** The first request of `script`'s session: the brief the reviewer was given. */
const briefOf = (script: string) =>
  JSON.stringify(
    world.model.stepRequests().find((request) => request.play.kind === "step" && request.play.script === script)!.body
      .messages,
  )

describe("a cwd review", () => {
  test("approves a clean uncommitted change: told the files and the diff (staged, unstaged, new)", async () => {
    const repo = await dirty(async (dir) => {
      await writeFile(`${dir}/util.ts`, "export const twice = (n: number) => n * 2\n")
      await git(dir, "add", "util.ts")
      await writeFile(`${dir}/calc.ts`, SOUND.replace("a + b", "b + a"))
      await writeFile(`${dir}/notes.md`, "an untracked note\n")
    })
    world.model.setScript("cwd_ok", { turns: [{ steps: [read("calc.ts"), say(APPROVE)] }] })
    const out = structuredOf(await mcp.call("review", { cwd: repo, brief: "Is add right? [script:cwd_ok]" }))
    expect(out.status).toBe("succeeded")
    expect(out.output).toEqual({ verdict: "approve", findings: [] })
    expect(out.workspace).toBe(realpathSync(repo))
    expect(out.reviewed).toEqual({
      cwd: realpathSync(repo),
      files: [
        { path: "calc.ts", change: "modified" },
        { path: "notes.md", change: "added" },
        { path: "util.ts", change: "added" },
      ],
    })
    const brief = briefOf("cwd_ok")
    expect(brief).toContain("- calc.ts (modified)")
    expect(brief).toContain("+export const add = (a: number, b: number) => b + a")
    expect(brief).toContain("+export const twice")
    expect(brief).toContain("+an untracked note")
    expect(brief).toContain("request_changes")
  }, 120_000)

  test("requests changes on a planted bug, the finding at the file and line in cwd", async () => {
    const repo = await dirty((dir) => writeFile(`${dir}/calc.ts`, BUGGY))
    world.model.setScript("cwd_bug", { turns: [{ steps: [read("calc.ts"), say(CHANGES)] }] })
    const out = structuredOf(await mcp.call("review", { cwd: repo, brief: "Check add. [script:cwd_bug]" }))
    expect(out.status).toBe("succeeded")
    const output = out.output as { verdict: string; findings: { file: string; line: number }[] }
    expect(output.verdict).toBe("request_changes")
    const [finding] = output.findings
    const lines = readFileSync(`${repo}/${finding!.file}`, "utf8").split("\n")
    expect(lines[finding!.line - 1]).toContain("a - b")
    expect(briefOf("cwd_bug")).toContain("+export const add = (a: number, b: number) => a - b")
    expect(out.reviewed).toEqual({ cwd: realpathSync(repo), files: [{ path: "calc.ts", change: "modified" }] })
  }, 120_000)

  test("attack: the reviewer writes in cwd (write tool, shell, git add): refused, git state unchanged", async () => {
    const repo = await dirty(async (dir) => {
      await writeFile(`${dir}/calc.ts`, BUGGY)
      await writeFile(`${dir}/extra.ts`, "export {}\n")
    })
    const before = await gitState(repo)
    world.model.setScript("cwd_write", {
      turns: [{ steps: [...ATTACK, write(`${realpathSync(repo)}/calc.ts`, "PWNED\n"), say(APPROVE)] }],
    })
    const out = structuredOf(await mcp.call("review", { cwd: repo, brief: "Look. [script:cwd_write]" }))
    const calls = out.tool_calls as { tool: string; status: string; exit_code?: number }[]
    expect(calls.filter((call) => call.tool === "write" || call.tool === "edit")).toEqual([])
    const shells = calls.filter((call) => call.tool === "sandbox_shell")
    expect(shells).toHaveLength(1)
    expect(shells[0]!.exit_code).not.toBe(0)
    expect(await gitState(repo)).toEqual(before)
    expect(readFileSync(`${repo}/calc.ts`, "utf8")).toBe(BUGGY)
    expect(existsSync(`${repo}/new.ts`)).toBe(false)
  }, 120_000)

  test("control: the same steps by an in-place worker change the tree (the attack can write)", async () => {
    const repo = await dirty((dir) => writeFile(`${dir}/calc.ts`, BUGGY))
    const before = await gitState(repo)
    world.model.setScript("cwd_writer", { turns: [{ steps: [...ATTACK, done] }] })
    const out = structuredOf(await mcp.call("worker", { cwd: repo, task: "Edit. [script:cwd_writer]" }))
    expect(out.status).toBe("succeeded")
    expect(await gitState(repo)).not.toEqual(before)
    expect(readFileSync(`${repo}/calc.ts`, "utf8")).toContain("PWNED")
    expect(existsSync(`${repo}/new.ts`)).toBe(true)
  }, 120_000)

  test("the diff is git's own: the repository's diff.external and textconv do not run", async () => {
    const repo = await dirty(async (dir) => {
      await git(dir, "config", "diff.external", "echo EXTERNAL_RAN #")
      await git(dir, "config", "diff.evil.textconv", "sed s/^/TEXTCONV_RAN/")
      await writeFile(`${dir}/.git/info/attributes`, "*.ts diff=evil\n")
      await writeFile(`${dir}/calc.ts`, BUGGY)
    })
    // Control: git on the host, with the repository's config, runs both.
    expect(await git(repo, "diff", "HEAD")).toContain("EXTERNAL_RAN")
    expect(await git(repo, "diff", "--no-ext-diff", "HEAD")).toContain("TEXTCONV_RAN")
    world.model.setScript("cwd_conf", { turns: [{ steps: [say(APPROVE)] }] })
    const out = structuredOf(await mcp.call("review", { cwd: repo, brief: "Look. [script:cwd_conf]" }))
    expect(out.status).toBe("succeeded")
    const brief = briefOf("cwd_conf")
    expect(brief).not.toContain("EXTERNAL_RAN")
    expect(brief).not.toContain("TEXTCONV_RAN")
    expect(brief).toContain("+export const add = (a: number, b: number) => a - b")
  }, 120_000)

  test("a FIFO in a tracked file's place and a new one: the review runs, told its diff is incomplete", async () => {
    const repo = await dirty(async (dir) => {
      await rm(`${dir}/calc.ts`)
      for (const fifo of ["calc.ts", "pipe"]) expect((await run(["mkfifo", `${dir}/${fifo}`])).code).toBe(0)
    })
    world.model.setScript("cwd_fifo", { turns: [{ steps: [say(APPROVE)] }] })
    const out = structuredOf(await mcp.call("review", { cwd: repo, brief: "Look. [script:cwd_fifo]" }))
    expect(out.status).toBe("succeeded")
    // git lists no FIFO as untracked: only the tracked file it cannot hash.
    expect(out.reviewed).toEqual({ cwd: realpathSync(repo), files: [{ path: "calc.ts", change: "modified" }] })
    expect(briefOf("cwd_fifo")).toContain("cut short: read the files themselves")
  }, 120_000)

  test("control: a plain change's diff is not said to be cut", async () => {
    const repo = await dirty((dir) => writeFile(`${dir}/calc.ts`, BUGGY))
    world.model.setScript("cwd_whole", { turns: [{ steps: [say(APPROVE)] }] })
    const out = structuredOf(await mcp.call("review", { cwd: repo, brief: "Look. [script:cwd_whole]" }))
    expect(out.status).toBe("succeeded")
    expect(briefOf("cwd_whole")).not.toContain("cut short")
  }, 120_000)
})

describe("a diff larger than the brief can carry", () => {
  test("is cut at a line's end to half the brief limit, said to be cut; the review still runs", async () => {
    const line = "export const filler = 'a line of generated text to make the diff long'\n"
    const repo = await dirty((dir) => writeFile(`${dir}/big.ts`, line.repeat(4000)))
    world.model.setScript("cwd_big", { turns: [{ steps: [say(APPROVE)] }] })
    const out = structuredOf(await mcp.call("review", { cwd: repo, brief: "Look. [script:cwd_big]" }))
    expect(out.status).toBe("succeeded")
    const brief = briefOf("cwd_big")
    expect(brief).toContain("cut short: read the files themselves")
    expect(brief).toContain("+export const filler")
    expect(brief.length).toBeLessThan(line.length * 4000)
  }, 120_000)
})

describe("a review call that names no one thing to review", () => {
  test("both, neither, a clean tree, no git, a planted .git, HOME, relative: refused with next:, no task", async () => {
    const live = await dirty((dir) => writeFile(`${dir}/calc.ts`, BUGGY))
    const clean = await dirty(async () => {})
    const plain = await scratch(world)
    await writeFile(`${plain}/calc.ts`, BUGGY)
    const planted = await scratch(world)
    await writeFile(`${planted}/.git`, `gitdir: ${live}/.git\n`)
    await mkdir(`${planted}/src`)
    world.model.setScript("cwd_idle", { turns: [{ steps: [say(APPROVE)] }] })
    const tasks = await taskCount(world)
    const refused: [Record<string, unknown>, string][] = [
      [{ cwd: live, patch_id: "patch_zz1_0123abcd" }, "exactly one of patch_id and cwd; both"],
      [{}, "exactly one of patch_id and cwd; neither"],
      [{ cwd: clean }, "no uncommitted change"],
      [{ cwd: plain }, "not in a Git repository"],
      [{ cwd: `${planted}/src` }, ""],
      [{ cwd: world.home.paths.home }, ""],
      [{ cwd: "relative/dir" }, "absolute path"],
    ]
    for (const [args, problem] of refused) {
      const result = await mcp.call("review", { ...args, brief: "Look. [script:cwd_idle]" })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain(problem)
      expect(textOf(result)).toContain("next:")
    }
    expect(await taskCount(world)).toBe(tasks)
    // Control: the dirty repository itself is reviewed.
    const ok = await mcp.call("review", { cwd: live, brief: "Look. [script:cwd_idle]" })
    expect(ok.isError).toBeFalsy()
    expect(await taskCount(world)).toBe(tasks + 1)
  }, 120_000)
})
