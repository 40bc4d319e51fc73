// A worker's `verify`: the server itself runs the parent's check command on the result, in the runner's
// read-only, network-off sandbox, after the agent's session is gone. Through the real OpenCode on the
// scripted model: an edit that makes the test pass verifies with exit 0 and keeps `succeeded`; an agent
// that claims success without the fix ends needs_review with the failing test named in the digest; an
// isolated worker is verified in its worktree while the user's repository stays failing; a worker that
// empties the test is graded on the test as it was (verify-frozen.test.ts has the rest). Attack: a
// verify that writes to the workspace and connects to a 127.0.0.1 listener does neither (control: the
// same command through the plain shell does both). A bad verify is refused before any task starts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { createServer, type Server } from "node:net"
import { run } from "../../src/util/process"
import { battery, makeRepo, structuredOf, taskCount, textOf } from "./_world"

const shell = (command: string) => ({ tool: "sandbox_shell", args: { command } })
// The agent's word, which never counts: every script claims the tests pass.
const claim = { text: "All tests pass. {{toolOutputs}}" }
const FIX = "printf 'export const add = (a: number, b: number) => a + b\\n' > tally.ts && echo fixed"
const BUGGY = "export const add = (a: number, b: number) => a - b\n"
const TEST = `import { expect, test } from "bun:test"
import { add } from "./tally"
test("add sums two numbers", () => expect(add(2, 3)).toBe(5))
`
const VERIFY = "bun test ./tally.test.ts"
// A test that checks nothing: what a worker could leave to make any check pass.
const EMPTIED = 'import { test } from "bun:test"\\ntest("add sums two numbers", () => {})\\n'

const { world, mcp } = battery({
  fix_in_place: { turns: [{ steps: [shell(FIX), claim] }] },
  fix_plain: { turns: [{ steps: [shell(FIX), claim] }] },
  fix_isolated: { turns: [{ steps: [shell(FIX), claim] }] },
  edit_test: { turns: [{ steps: [shell(`printf '${EMPTIED}' > tally.test.ts && echo emptied`), claim] }] },
  no_fix: { turns: [{ steps: [shell("echo 'looked at it' > NOTES.md && echo noted"), claim] }] },
  rework: {
    turns: [{ steps: [shell("echo noted > NOTES.md && echo noted"), claim] }, { steps: [shell(FIX), claim] }],
  },
  idle: { turns: [{ steps: [claim] }] },
})
let listener: Server
let connections = 0

beforeAll(async () => {
  listener = createServer((socket) => {
    connections++
    socket.end()
  })
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
}, 120_000)

afterAll(async () => {
  await new Promise((resolve) => listener?.close(resolve))
})

/** The client waits past its default 60 s: a verification may run its check twice (verify-frozen.test.ts). */
const call = (tool: string, args: Record<string, unknown>) => mcp.call(tool, args, { timeoutMs: 170_000 })

const gitEnv = { PATH: "/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" }

/** A repository whose one test fails until tally.ts is fixed. */
async function tallyRepo(): Promise<string> {
  const dir = await makeRepo(world)
  await Bun.write(`${dir}/tally.ts`, BUGGY)
  await Bun.write(`${dir}/tally.test.ts`, TEST)
  await run(["git", "add", "-A"], { cwd: dir, env: gitEnv })
  await run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "tally"], {
    cwd: dir,
    env: gitEnv,
  })
  return dir
}

interface VerificationOut {
  command: string
  exit_code: number | null
  duration_ms: number
  digest: string
}
const verificationOf = (result: Parameters<typeof structuredOf>[0]) =>
  structuredOf(result).verification as VerificationOut | undefined

describe("the product's verification", () => {
  test("an edit that makes the test pass: exit 0, status succeeded; without verify, no verification", async () => {
    const cwd = await tallyRepo()
    const result = await call("worker", { cwd, task: "[script:fix_in_place] fix add", verify: VERIFY })
    const verification = verificationOf(result)
    expect(verification?.command).toBe(VERIFY)
    expect(verification?.exit_code).toBe(0)
    expect(structuredOf(result).status).toBe("succeeded")
    expect(structuredOf(result).warnings ?? []).toEqual([])
    expect(textOf(result)).toContain(`verification (run by the server): ${VERIFY} → exit code 0`)

    const plain = await tallyRepo()
    const unverified = await call("worker", { cwd: plain, task: "[script:fix_plain] fix add" })
    expect(structuredOf(unverified).status).toBe("succeeded")
    expect(verificationOf(unverified)).toBeUndefined()
    expect(textOf(unverified)).not.toContain("verification")
  }, 180_000)

  test("a claim of success without the fix: needs_review, the failing test named in the digest", async () => {
    const cwd = await tallyRepo()
    const result = await call("worker", { cwd, task: "[script:no_fix] fix add", verify: VERIFY })
    const out = structuredOf(result)
    const verification = verificationOf(result)
    expect(verification?.exit_code).not.toBe(0)
    expect(verification?.exit_code).not.toBeNull()
    expect(verification?.digest).toContain("failing tests (1)")
    expect(verification?.digest).toContain("add sums two numbers")
    expect(out.status).toBe("needs_review")
    expect(out.warnings?.[0]).toContain(`\`${VERIFY}\` exited`)
    expect(String(out.next)).toContain("verification.digest")
  }, 180_000)

  test("a worker that empties the named test: graded on the test as it was, the change named", async () => {
    const cwd = await tallyRepo()
    const result = await call("worker", { cwd, task: "[script:edit_test] fix add", verify: VERIFY })
    const verification = structuredOf(result).verification as VerificationOut & {
      definition_changed: string[]
      as_left: { exit_code: number | null }
    }
    expect(verification.exit_code).not.toBe(0)
    expect(verification.definition_changed).toEqual(["tally.test.ts"])
    // As the worker left it, the emptied test passes: the grade alone would have read as verified.
    expect(verification.as_left.exit_code).toBe(0)
    expect(structuredOf(result).status).toBe("needs_review")
  }, 180_000)

  test("task_continue verifies again: a failing first turn, then the fix, ends succeeded with exit 0", async () => {
    const cwd = await tallyRepo()
    const first = structuredOf(await call("worker", { cwd, task: "[script:rework] fix add", verify: VERIFY }))
    expect(first.status).toBe("needs_review")
    expect((first.verification as VerificationOut).exit_code).not.toBe(0)
    const again = await call("task_continue", { task_id: first.task_id, task: "[script:rework] now fix add" })
    expect(verificationOf(again)?.exit_code).toBe(0)
    expect(structuredOf(again).status).toBe("succeeded")
  }, 180_000)

  test("an isolated worker is verified in its worktree; the user's repository is untouched", async () => {
    const cwd = await tallyRepo()
    const result = await call("worker", {
      cwd,
      isolation: "worktree",
      task: "[script:fix_isolated] fix add",
      verify: VERIFY,
    })
    const out = structuredOf(result)
    expect(verificationOf(result)?.exit_code).toBe(0)
    expect(out.status).toBe("succeeded")
    expect((out.patch as { patch_id: string }).patch_id).toBeTruthy()
    expect(await readFile(`${cwd}/tally.ts`, "utf8")).toBe(BUGGY)
    // Control: the same check in the user's repository still fails, so the pass above was the worktree's.
    const here = await run(["bun", "test", "./tally.test.ts"], { cwd, env: { PATH: process.env.PATH ?? "" } })
    expect(here.code).not.toBe(0)
  }, 180_000)
})

describe("the verification sandbox", () => {
  const attack = () => {
    const port = (listener.address() as { port: number }).port
    // Both attempts run whatever the first does; the line records each one's exit status.
    const connect = `(exec 3<>/dev/tcp/127.0.0.1/${port}) && n=0 || n=1`
    return `touch pwned; t=$?; ${connect}; echo "touch=$t net=$n"; exit $((t+n))`
  }

  test("a verify that writes the workspace and connects to a loopback listener does neither", async () => {
    const cwd = await tallyRepo()
    const before = connections
    const result = await call("worker", { cwd, task: "[script:idle] look", verify: attack() })
    const verification = verificationOf(result)
    expect(verification?.digest).toContain("touch=1 net=1")
    expect(verification?.exit_code).toBe(2)
    expect(existsSync(`${cwd}/pwned`)).toBe(false)
    expect(connections).toBe(before)
    expect(structuredOf(result).status).toBe("needs_review")

    // Control: the same command through the plain shell writes the file and reaches the listener.
    const plain = await run(["/bin/bash", "-c", attack()], { cwd, env: { PATH: "/usr/bin:/bin" } })
    expect(plain.stdout).toContain("touch=0 net=0")
    expect(existsSync(`${cwd}/pwned`)).toBe(true)
    expect(connections).toBe(before + 1)
  }, 180_000)

  test("a verify with a newline or over the limit is refused with a next step, before any task", async () => {
    const cwd = await tallyRepo()
    const tasks = await taskCount(world)
    for (const verify of ["bun test\nrm -rf .", "x".repeat(1001), "   "]) {
      const result = await call("worker", { cwd, task: "[script:idle] look", verify })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain("verify")
      expect(textOf(result)).toContain("next:")
    }
    expect(await taskCount(world)).toBe(tasks)
  }, 60_000)
})
