// A worker's `scope`: the paths it may change, held by the kernel for every tool and checked by the
// settle-time diff, through the real OpenCode on the scripted model. Control: an edit inside the scope
// succeeds. Attacks: the agent writes outside it with the file tool (refused by the session's rules), with
// sandbox_shell (read-only: scope-kernel.test.ts), and through the edit rules' wider wildcard
// (test/sub/x.test.ts under test/*.test.ts), which the rules let by and the kernel refuses. Isolated: a
// file changed outside the scope anyway (by the host, a stand-in for any hole) is left out of the patch
// (and out of what patch_apply writes) and listed. Links out of the scope and ignored files:
// scope-links.test.ts. A worker without scope is as before, and a bad scope is refused before any task
// record exists.
import { describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { until } from "../helpers/until"
import { battery, makeRepo, scratch, structuredOf, taskCount, textOf } from "./_world"

const write = (filePath: string, content: string) => ({ tool: "write", args: { filePath, content } })
const shell = (command: string) => ({ tool: "sandbox_shell", args: { command } })
const done = { text: "Done, only inside the scope. {{toolOutputs}}" }

const { world, mcp } = battery({
  inside: { turns: [{ steps: [write("src/tally.ts", "export const n = 1\n"), done] }] },
  outside_tool: {
    turns: [
      {
        steps: [
          write("src/tally.ts", "export const n = 1\n"),
          write("secret.ts", "stolen\n"),
          { tool: "edit", args: { filePath: "README.md", oldString: "# fixture", newString: "# pwned" } },
          { tool: "edit", args: { filePath: "lib/made.ts", oldString: "", newString: "made\n" } },
          done,
        ],
      },
    ],
  },
  continued: {
    turns: [
      { steps: [write("src/tally.ts", "export const n = 1\n"), done] },
      { steps: [write("later.ts", "later\n"), done] },
    ],
  },
  outside_shell: {
    turns: [
      {
        steps: [
          shell("echo pwned > README.md; echo > lib/new.ts; echo ok"),
          // The edit rules' OpenCode wildcard (test/*.test.ts) lets this through; the scope, held by the kernel, does not.
          write("test/sub/deep.test.ts", "wide\n"),
          write("test/new.test.ts", "new\n"),
          done,
        ],
      },
    ],
  },
  outside_delete: { turns: [{ steps: [shell("rm README.md && echo ok"), done] }] },
  isolated: {
    turns: [
      {
        steps: [
          write("src/tally.ts", "export const n = 2\n"),
          shell("echo pwned > README.md; echo at=$(pwd)"),
          write("test/sub/deep.test.ts", "pwned\n"),
          // Holds the turn until the host's write (the stand-in for a hole) shows in the worktree.
          shell("for i in $(seq 1200); do [ -e test/sub/deep.test.ts ] && break; sleep 0.1; done; echo seen"),
          done,
        ],
      },
    ],
  },
  subdir: {
    turns: [
      { steps: [shell("echo y > top.ts; echo ok"), write("pkg/deep/b.ts", "b\n"), write("pkg/a.ts", "a\n"), done] },
    ],
  },
  idle: { turns: [{ steps: [done] }] },
})

const SCOPE = ["src/**", "test/*.test.ts"]
const outOf = (result: Parameters<typeof structuredOf>[0]) => structuredOf(result).out_of_scope as string[] | undefined

describe("a scoped worker in place", () => {
  test("control: an edit inside the scope succeeds with nothing out of scope", async () => {
    const cwd = await makeRepo(world)
    const result = await mcp.call("worker", { cwd, task: "[script:inside] edit", scope: SCOPE })
    expect(structuredOf(result).status).toBe("succeeded")
    expect(outOf(result)).toBeUndefined()
    expect(await readFile(`${cwd}/src/tally.ts`, "utf8")).toBe("export const n = 1\n")
  }, 120_000)

  test("attack: write and edit outside the scope with the file tools are refused; the edit inside lands", async () => {
    const cwd = await makeRepo(world)
    const result = await mcp.call("worker", { cwd, task: "[script:outside_tool] edit", scope: SCOPE })
    const out = structuredOf(result)
    for (const path of ["secret.ts", "README.md", "lib/made.ts"])
      expect(String(out.report)).toContain(`Changing ${path} is refused by this session's rules`)
    expect(existsSync(`${cwd}/secret.ts`)).toBe(false)
    expect(existsSync(`${cwd}/lib/made.ts`)).toBe(false)
    expect(await readFile(`${cwd}/README.md`, "utf8")).toBe("# fixture\n")
    expect(await readFile(`${cwd}/src/tally.ts`, "utf8")).toBe("export const n = 1\n")
    expect(out.status).toBe("succeeded")
    expect(outOf(result)).toBeUndefined()
  }, 120_000)

  test("attack: task_continue (a forked session) writing outside the scope with the file tool is refused", async () => {
    const cwd = await makeRepo(world)
    const first = structuredOf(await mcp.call("worker", { cwd, task: "[script:continued] edit", scope: SCOPE }))
    expect(first.status).toBe("succeeded")
    const again = await mcp.call("task_continue", { task_id: first.task_id, task: "[script:continued] more" })
    const out = structuredOf(again)
    expect(String(out.report)).toContain("Changing later.ts is refused by this session's rules")
    expect(existsSync(`${cwd}/later.ts`)).toBe(false)
    expect(out.status).toBe("succeeded")
  }, 180_000)

  test("control: the same writes without a scope succeed, as a worker's always did", async () => {
    const cwd = await makeRepo(world)
    const result = await mcp.call("worker", { cwd, task: "[script:outside_tool] edit" })
    expect(structuredOf(result).status).toBe("succeeded")
    expect(String(structuredOf(result).report)).not.toContain("refused")
    expect(outOf(result)).toBeUndefined()
    expect(await readFile(`${cwd}/secret.ts`, "utf8")).toBe("stolen\n")
    expect(await readFile(`${cwd}/README.md`, "utf8")).toBe("# pwned\n")
    expect(await readFile(`${cwd}/lib/made.ts`, "utf8")).toBe("made\n")
  }, 120_000)

  test("attack: sandbox_shell's writes outside the scope fail, and so does a write the edit rules let by", async () => {
    const cwd = await makeRepo(world)
    await Bun.write(`${cwd}/lib/.keep`, "")
    const result = await mcp.call("worker", { cwd, task: "[script:outside_shell] edit", scope: SCOPE })
    const report = String(structuredOf(result).report)
    expect(report).toContain("Read-only file system")
    expect(report).toContain(`Could not write ${cwd}/test/sub/deep.test.ts: it is read-only for this worker`)
    expect(existsSync(`${cwd}/test/sub`)).toBe(false)
    // Control: a new file the scope names is created by the same tool (its directory bound for that write).
    expect(await readFile(`${cwd}/test/new.test.ts`, "utf8")).toBe("new\n")
    // lib/.keep was there before the task and is unchanged: only what the task changed counts.
    expect(structuredOf(result).status).toBe("succeeded")
    expect(outOf(result)).toBeUndefined()
    expect(await readFile(`${cwd}/README.md`, "utf8")).toBe("# fixture\n")
    expect(existsSync(`${cwd}/lib/new.ts`)).toBe(false)
  }, 120_000)

  test("attack: deleting a tracked file outside the scope fails read-only; the file stays", async () => {
    const cwd = await makeRepo(world)
    const result = await mcp.call("worker", { cwd, task: "[script:outside_delete] edit", scope: ["src/**"] })
    expect(String(structuredOf(result).report)).toContain("Read-only file system")
    expect(await readFile(`${cwd}/README.md`, "utf8")).toBe("# fixture\n")
    expect(structuredOf(result).status).toBe("succeeded")
    expect(outOf(result)).toBeUndefined()
  }, 120_000)

  test("in a subdirectory of the repository, the scope is relative to cwd, not to the repository", async () => {
    const repo = await makeRepo(world)
    await Bun.write(`${repo}/sub/pkg/.keep`, "")
    const result = await mcp.call("worker", { cwd: `${repo}/sub`, task: "[script:subdir] edit", scope: ["pkg/*.ts"] })
    expect(String(structuredOf(result).report)).toContain("pkg/deep/b.ts: it is read-only for this worker")
    expect(existsSync(`${repo}/sub/pkg/deep`)).toBe(false)
    expect(await readFile(`${repo}/sub/pkg/a.ts`, "utf8")).toBe("a\n")
    expect(structuredOf(result).status).toBe("succeeded")
    expect(existsSync(`${repo}/sub/top.ts`)).toBe(false)
  }, 120_000)

  test("outside a Git repository the scope cannot be checked: needs_review, saying so (fails closed)", async () => {
    const cwd = await scratch(world)
    const result = await mcp.call("worker", { cwd, task: "[script:inside] edit", scope: SCOPE })
    expect(structuredOf(result).status).toBe("needs_review")
    expect(String(structuredOf(result).warnings)).toContain("could not be checked against its scope")
    // Control: the same worker without scope succeeds there.
    const plain = await mcp.call("worker", { cwd: await scratch(world), task: "[script:inside] edit" })
    expect(structuredOf(plain).status).toBe("succeeded")
  }, 120_000)
})

describe("a scoped isolated worker", () => {
  test("the out-of-scope file is left out of the patch and listed; patch_apply writes only the scope", async () => {
    const cwd = await makeRepo(world)
    const before = world.model.toolResults().length
    const call = mcp.call("worker", {
      cwd,
      isolation: "worktree",
      task: "[script:isolated] edit",
      scope: ["src/tally.ts", "test/*.test.ts"],
    })
    // The worktree, as the worker's shell saw it; the host writes outside the scope there.
    const at = () =>
      world.model
        .toolResults()
        .slice(before)
        .map((r) => /at=(\S+)/.exec(r.output)?.[1])
        .find(Boolean)
    expect(await until(() => at() !== undefined, 90_000)).toBe(true)
    await Bun.write(`${at()}/test/sub/deep.test.ts`, "pwned\n")
    const result = await call
    const out = structuredOf(result)
    expect(String(out.report)).toContain("test/sub/deep.test.ts: it is read-only for this worker")
    expect(out.status).toBe("needs_review")
    expect(outOf(result)).toEqual(["test/sub/deep.test.ts"])
    const patch = out.patch as { patch_id: string; digest: string; files: Array<{ path: string }> }
    expect(patch.files.map((file) => file.path)).toEqual(["src/tally.ts"])
    expect(String(out.next)).toContain("left out of the patch")
    const shown = textOf(await mcp.call("patch_show", { patch_id: patch.patch_id }))
    expect(shown).toContain("src/tally.ts")
    expect(shown).not.toContain("pwned")
    const applied = await mcp.call("patch_apply", { patch_id: patch.patch_id, digest: patch.digest })
    expect(applied.isError).toBeFalsy()
    expect(await readFile(`${cwd}/src/tally.ts`, "utf8")).toBe("export const n = 2\n")
    expect(await readFile(`${cwd}/README.md`, "utf8")).toBe("# fixture\n")
  }, 180_000)
})

describe("a bad scope", () => {
  test("is refused with a next step before any task record exists", async () => {
    const cwd = await makeRepo(world)
    const tasks = await taskCount(world)
    const bad = [[], ["../outside"], ["/etc"], ["src\n"], ["a".repeat(301)], Array.from({ length: 65 }, () => "a")]
    for (const scope of bad) {
      const result = await mcp.call("worker", { cwd, task: "[script:idle] look", scope })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain("scope")
      expect(textOf(result)).toContain("next:")
      expect(textOf(result)).not.toContain("    at ")
    }
    expect(await taskCount(world)).toBe(tasks)
  }, 60_000)
})
