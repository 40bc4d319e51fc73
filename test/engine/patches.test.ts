// The patch use cases called on the engine directly (delegations.patches), on the real OpenCode, the
// scripted model and the sandbox: the rule that a running task's patch is never discarded holds on the
// engine's surface, not only in the MCP tool, and for any process sharing the state dir (a second MCP
// server sees the task running in its record). Controls: once the task is cancelled the same discard
// removes the patch and its worktree, and a second discard is answered "already".
import { describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { agentName } from "../../src/agents/names"
import { AppError } from "../../src/errors"
import type { Delegations } from "../../src/engine/lifecycle"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { LONG_TASK } from "../helpers/long-task"
import { write } from "../helpers/steps"
import { fileWorld } from "../mcp/_file-world"
import { connect, makeRepo } from "../mcp/_setup"

const world = fileWorld({
  edit: { turns: [{ steps: [write("added.txt", "from the worker\n"), { text: "Added added.txt." }] }] },
  long: LONG_TASK,
})

/** An isolated worker started through the engine, as delegate_parallel and worker start one. */
async function isolated(delegations: Delegations, cwd: string, task: string): Promise<TaskRecord> {
  const { record } = await delegations.start({
    role: "worker",
    agent: agentName("worker"),
    cwd,
    brief: task,
    title: "worker: engine patches test",
    writable: true,
    policy: { delegation: { role: "worker", mechanical: false }, texts: { task } },
    isolation: "worktree",
  })
  return record
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(outcome).toBeInstanceOf(AppError)
  return outcome as AppError
}

describe("delegations.patches.discard", () => {
  test("a running task's patch is refused by its process and another; cancelled, it goes (control)", async () => {
    const cwd = await makeRepo(world)
    const owner = await connect(world)
    const other = await connect(world)
    try {
      const record = await isolated(owner.delegations, cwd, "Slow isolated work [script:long]")
      const patchId = record.isolation!.patchId
      expect(record.status).toBe("running")
      for (const delegations of [owner.delegations, other.delegations]) {
        const refused = await refusal(delegations.patches.discard(patchId))
        expect(refused.kind).toBe("Usage")
        expect(refused.message).toContain(`belongs to ${record.id}, which is still running`)
        expect(refused.hint).toContain("task_cancel it first")
        expect(existsSync(record.workspace)).toBe(true)
      }
      expect((await owner.delegations.cancel(record.id)).status).toBe("cancelled")
      const discarded = await other.delegations.patches.discard(patchId)
      expect(discarded).toMatchObject({ kind: "discarded", was: "waiting", kept: [] })
      expect(existsSync(record.workspace)).toBe(false)
      expect(await owner.delegations.patches.discard(patchId)).toMatchObject({ kind: "already", id: patchId })
    } finally {
      await other.close()
      await owner.close()
    }
  }, 120_000)

  test("an unknown patch id is a Usage error naming task_list; a malformed one is not an id", async () => {
    const { delegations, close } = await connect(world)
    try {
      const unknown = await refusal(delegations.patches.discard("patch_zzzzzzzz_00000000"))
      expect([unknown.kind, unknown.hint]).toEqual(["Usage", expect.stringContaining("task_list")])
      const malformed = await refusal(delegations.patches.discard("../../etc"))
      expect(malformed.message).toContain("is not a patch id")
    } finally {
      await close()
    }
  })
})

describe("delegations.patches show and apply", () => {
  test("show pages the diff and names the files; apply needs the digest; a second apply is answered", async () => {
    const cwd = await makeRepo(world)
    const { delegations, close } = await connect(world)
    try {
      const started = await isolated(delegations, cwd, "Add a file [script:edit]")
      const done = await delegations.follow(started.id)
      expect(done?.status).toBe("succeeded")
      const patchId = started.isolation!.patchId
      const page = await delegations.patches.show(patchId)
      expect(page.files.map((file) => file.path)).toEqual(["added.txt"])
      expect(page.diff).toContain("+from the worker")
      const missing = await refusal(delegations.patches.show(patchId, { file: "README.md" }))
      expect(missing.hint).toContain("It changes: added.txt")
      // The attack: a digest the caller never saw writes nothing.
      await refusal(delegations.patches.apply(patchId, { digest: "0".repeat(64) }))
      expect(existsSync(`${cwd}/added.txt`)).toBe(false)
      // Control: the digest from show applies it.
      const applied = await delegations.patches.apply(patchId, { digest: page.record.digest! })
      expect(applied).toMatchObject({ kind: "applied", workspace: cwd })
      expect(await Bun.file(`${cwd}/added.txt`).text()).toBe("from the worker\n")
      const again = await delegations.patches.apply(patchId, { digest: page.record.digest! })
      expect(again.kind).toBe("already")
      expect((await delegations.patches.discard(patchId)).kind).toBe("discarded")
    } finally {
      await close()
    }
  }, 120_000)
})
