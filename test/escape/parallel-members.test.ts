// delegate_parallel members take what their role takes as a single call, through the real OpenCode on the
// scripted model. Attacks: an isolated member whose agent writes outside its scope (its shell's write and its
// write tool's both refused by the kernel) has a patch of its scope alone; a member whose check fails ends
// needs_review with the exit code,
// whatever its report claims. Controls: a passing check and a valid structured answer leave `succeeded` with
// `verification` and `output`; the same members without the arguments succeed and their patch keeps the file.
// A bad member (a scout with a worker's argument, a bad schema, scope or verify) refuses the whole group
// with a next step before any task record or group exists; the same group without it starts.
import { describe, expect, test } from "bun:test"
import { jsonFiles } from "../helpers/records"
import { battery, makeRepo, taskCount, textOf } from "./_world"

const write = (filePath: string, content: string) => ({ tool: "write", args: { filePath, content } })
const shell = (command: string) => ({ tool: "sandbox_shell", args: { command } })
const SCHEMA = {
  type: "object",
  properties: { count: { type: "integer" } },
  required: ["count"],
  additionalProperties: false,
}
const TALLY = "export const n = 1\n"

const { world, mcp } = battery({
  scoped: {
    // The shell's write outside the scope is refused by the kernel; so is the write tool's, which the
    // session's edit rules let by (OpenCode's `*` spans directories).
    turns: [
      {
        steps: [
          write("src/tally.ts", TALLY),
          shell("echo pwned > README.md; echo done"),
          write("test/sub/deep.test.ts", "pwned\n"),
          { text: "Done." },
        ],
      },
    ],
  },
  // Every worker claims success; only the server's check counts.
  tally: { turns: [{ steps: [write("src/tally.ts", TALLY), { text: '{"count":1}' }] }] },
  answer: { turns: [{ steps: [{ text: '{"count":3}' }] }] },
  idle: { turns: [{ steps: [{ text: "nothing" }] }] },
})

interface Member {
  index: number
  task_id?: string
  role: string
  status: string
  patch?: { patch_id: string; digest: string; files: Array<{ path: string }> }
  out_of_scope?: string[]
  verification?: { command: string; exit_code: number | null; digest: string }
  output?: unknown
  output_error?: { message: string; unverified: string }
  next?: string
}
interface Group {
  group_id: string
  status: string
  tasks: Member[]
  next: string
}

/** Starts the group and follows it until every member has finished. */
async function runGroup(briefs: Record<string, unknown>[]): Promise<Group> {
  let result = await mcp.call("delegate_parallel", { briefs })
  expect(result.isError).toBeFalsy()
  let group = result.structuredContent as unknown as Group
  while (group.status === "running") {
    result = await mcp.call("delegate_parallel", { group_id: group.group_id })
    group = result.structuredContent as unknown as Group
  }
  return group
}

const groupCount = async () => (await jsonFiles(world.home.paths.groupsDir)).length

const worker = (cwd: string, script: string, extra: Record<string, unknown> = {}) => ({
  role: "worker",
  cwd,
  task: `[script:${script}] edit`,
  ...extra,
})
const scout = (cwd: string, script: string, extra: Record<string, unknown> = {}) => ({
  role: "scout",
  cwd,
  task: `[script:${script}] count`,
  ...extra,
})

describe("members with scope, verify and output_schema", () => {
  test("attack: writes outside the scope are refused in the group, and a failing check ends needs_review", async () => {
    const cwd = await makeRepo(world)
    const group = await runGroup([
      worker(cwd, "scoped", { scope: ["src/**", "test/*.test.ts"] }),
      worker(cwd, "tally", { verify: "grep -q 'n = 2' src/tally.ts" }),
      worker(cwd, "tally", { verify: "grep -q 'n = 1' src/tally.ts", output_schema: SCHEMA }),
      scout(cwd, "answer", { output_schema: SCHEMA }),
    ])
    const [scoped, failing, passing, answered] = group.tasks
    expect(group.tasks.map((task) => task.status)).toEqual(["succeeded", "needs_review", "succeeded", "succeeded"])
    expect(scoped!.out_of_scope).toBeUndefined()
    expect(scoped!.patch!.files.map((file) => file.path)).toEqual(["src/tally.ts"])
    expect(failing!.verification!.exit_code).toBe(1)
    expect(failing!.verification!.command).toBe("grep -q 'n = 2' src/tally.ts")
    // Controls inside the same group: a passing check and valid answers.
    expect(passing!.verification!.exit_code).toBe(0)
    expect(passing!.output).toEqual({ count: 1 })
    expect(answered!.output).toEqual({ count: 3 })
    expect(answered!.output_error).toBeUndefined()
    expect(group.next).toContain("Members 1 need review")
    // The member's result is the single call's: task_result reads the same fields from the record.
    const single = (await mcp.call("task_result", { task_id: failing!.task_id })).structuredContent as unknown as Member
    expect(single.verification).toEqual(failing!.verification)
    expect(single.status).toBe("needs_review")
  }, 240_000)

  test("control: the same members without the arguments succeed, and the patch keeps the file", async () => {
    const cwd = await makeRepo(world)
    const group = await runGroup([worker(cwd, "scoped"), worker(cwd, "tally"), scout(cwd, "answer")])
    expect(group.tasks.map((task) => task.status)).toEqual(["succeeded", "succeeded", "succeeded"])
    const [scoped, tally, answered] = group.tasks
    expect(scoped!.out_of_scope).toBeUndefined()
    expect(scoped!.patch!.files.map((file) => file.path).sort()).toEqual([
      "README.md",
      "src/tally.ts",
      "test/sub/deep.test.ts",
    ])
    expect(tally!.verification).toBeUndefined()
    expect(answered!.output).toBeUndefined()
    expect(group.next).not.toContain("need review")
  }, 240_000)
})

describe("a bad member", () => {
  test("refuses the whole group with a next step before any task record or group exists", async () => {
    const cwd = await makeRepo(world)
    const good = scout(cwd, "idle")
    const bad: Array<[Record<string, unknown>, string]> = [
      [scout(cwd, "idle", { scope: ["src/**"] }), "a scout takes no scope"],
      [scout(cwd, "idle", { verify: "true" }), "a scout takes no verify"],
      [scout(cwd, "idle", { output_schema: { type: "nope" } }), "output_schema is not a schema"],
      [worker(cwd, "idle", { output_schema: [] }), "output_schema must be a JSON Schema object"],
      [worker(cwd, "idle", { scope: ["../outside"] }), '"../outside" leaves the workspace with ..'],
      [worker(cwd, "idle", { scope: [] }), "scope is empty"],
      [worker(cwd, "idle", { verify: "true\nrm -rf ." }), "verify contains a control character"],
    ]
    const tasks = await taskCount(world)
    const groups = await groupCount()
    for (const [member, why] of bad) {
      const result = await mcp.call("delegate_parallel", { briefs: [good, member] })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toStartWith("briefs[1]: ")
      expect(textOf(result)).toContain(why)
      expect(textOf(result)).toContain("next:")
      expect(textOf(result)).not.toContain("    at ")
    }
    expect(await taskCount(world)).toBe(tasks)
    expect(await groupCount()).toBe(groups)
    // Control: the same group without the bad member starts, and its record and group are written.
    const started = await runGroup([good])
    expect(started.tasks.map((task) => task.status)).toEqual(["succeeded"])
    expect(await taskCount(world)).toBe(tasks + 1)
    expect(await groupCount()).toBe(groups + 1)
  }, 120_000)
})
