// worker, task_* and writer states on the real OpenCode with the scripted model, through the MCP SDK
// Client against the in-process server. One OpenCode server for the whole file.
import { expect, test } from "bun:test"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { readJson } from "../../src/util/fs"
import { LONG_TASK } from "../helpers/long-task"
import { fileWorld } from "./_file-world"
import { connect, lockFiles, makeRepo, structured, taskFiles, text } from "./_setup"

const world = fileWorld({
  edit: {
    turns: [
      {
        steps: [
          { tool: "read", args: { filePath: "src/tally.ts" } },
          {
            tool: "edit",
            args: {
              filePath: "src/tally.ts",
              oldString: "return words.length",
              newString: "return new Set(words).size",
            },
          },
          { text: "Done: src/tally.ts now counts distinct words. No commands run." },
        ],
      },
      {
        steps: [
          { tool: "write", args: { filePath: "src/extra.ts", content: "export const extra = 1\n" } },
          { text: "Added src/extra.ts." },
        ],
      },
    ],
  },
  long: LONG_TASK,
  plant: {
    turns: [
      {
        steps: [
          {
            tool: "sandbox_shell",
            args: {
              command:
                "mkdir -p vendor/lib/.git/hooks && printf '#!/bin/sh\\necho pwned\\n' > vendor/lib/.git/hooks/pre-commit && echo planted",
            },
          },
          { text: "Done." },
        ],
      },
    ],
  },
})

test("a worker edits one file; the result lists exactly that file from git, and task_continue reworks in the same conversation", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    const result = await client.callTool({
      name: "worker",
      arguments: { cwd: repo, task: "Count distinct words. [script:edit]" },
    })
    const out = structured(result)
    expect(out.status).toBe("succeeded")
    expect(out.files_changed).toEqual([{ path: "src/tally.ts", change: "modified" }])
    expect(await Bun.file(`${repo}/src/tally.ts`).text()).toContain("new Set(words).size")
    expect(out.model).toBe("scripted/fast")
    expect(String(out.transcript)).toContain("opencode export ses_")
    expect(text(result)).toContain("files changed (git): src/tally.ts (modified)")
    const record = await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${out.task_id}.json`)
    expect(record?.status).toBe("succeeded")
    expect(await lockFiles(world)).toEqual([])

    const again = structured(
      await client.callTool({
        name: "task_continue",
        arguments: { task_id: out.task_id, task: "Also add src/extra.ts." },
      }),
    )
    expect(again.status).toBe("succeeded")
    expect(again.task_id).toBe(out.task_id)
    expect(again.files_changed).toEqual([{ path: "src/extra.ts", change: "added" }])
    expect(again.report).toBe("Added src/extra.ts.")
    expect(await lockFiles(world)).toEqual([])
  } finally {
    await close()
  }
}, 90_000)

test("a second writer is refused while the first runs; the same idempotency key re-attaches; task_cancel settles in under 5 s and unlocks", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world, { syncBudgetMs: 1000 })
  try {
    const first = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd: repo, task: "Slow work [script:long]", idempotency_key: "k-1" },
      }),
    )
    expect(first.status).toBe("running")
    expect(first.next).toContain("task_status")
    const [lock] = await lockFiles(world)
    expect(lock).toBeDefined()

    const retry = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd: repo, task: "Slow work [script:long]", idempotency_key: "k-1" },
      }),
    )
    expect(retry.task_id).toBe(first.task_id)

    const second = await client.callTool({ name: "worker", arguments: { cwd: repo, task: "Other work [script:edit]" } })
    expect(second.isError).toBe(true)
    expect(text(second)).toContain(`held by task ${first.task_id}`)
    expect(text(second)).toContain("task_cancel")

    // Read-only work never consults the writer state.
    const scout = structured(
      await client.callTool({ name: "scout", arguments: { cwd: repo, task: "Look around. [script:demo]" } }),
    )
    expect(["succeeded", "running"]).toContain(scout.status)

    // Cancel a session that is really working (its creation can take seconds on a loaded machine).
    await waitFor(
      async () =>
        Boolean((await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${first.task_id}.json`))?.sessionID),
      60_000,
    )
    const started = performance.now()
    const cancelled = structured(await client.callTool({ name: "task_cancel", arguments: { task_id: first.task_id } }))
    const settledMs = performance.now() - started
    console.log(`cancel → settled: ${settledMs.toFixed(0)} ms`)
    // The session's own end is 120 s away (LONG_TASK), past this test's deadline: "cancelled" came first.
    expect(cancelled.status).toBe("cancelled")
    expect(await lockFiles(world)).toEqual([])
    const record = await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${first.task_id}.json`)
    expect(record?.status).toBe("cancelled")
  } finally {
    await close()
  }
}, 90_000)

test("notifications/cancelled for the call cancels its task and leaves the workspace unlocked with a record", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    const listed = async () =>
      (
        structured(await client.callTool({ name: "task_list", arguments: { cwd: repo } })) as unknown as {
          tasks: { task_id: string }[]
        }
      ).tasks.map((task) => task.task_id)
    // The repository's path may be an earlier test's (helpers/world.ts): this task is the one not listed before.
    const before = new Set(await listed())
    const controller = new AbortController()
    const call = client.callTool(
      { name: "worker", arguments: { cwd: repo, task: "Slow work [script:long]" } },
      { signal: controller.signal },
    )
    await waitFor(async () => (await lockFiles(world)).length === 1)
    controller.abort("the parent gave up")
    const started = performance.now()
    await expect(call).rejects.toThrow()
    let id = ""
    await waitFor(async () => {
      id = (await listed()).find((task) => !before.has(task)) ?? ""
      return id !== ""
    })
    await waitFor(
      async () => (await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${id}.json`))?.status === "cancelled",
    )
    // Settled as cancelled, and LONG_TASK's own end is 120 s away: the cancel came first.
    console.log(`notifications/cancelled → settled: ${(performance.now() - started).toFixed(0)} ms`)
    // Cancelled before OpenCode finished creating the session: quarantined with the reason until that
    // late session is removed; otherwise already released.
    const lock = await readJson<{ state: string; reason?: string }>(
      `${world.home.paths.locksDir}/${(await lockFiles(world))[0]}`,
    )
    if (lock)
      expect(lock).toMatchObject({
        state: "quarantined",
        reason: expect.stringContaining("still creating its session"),
      })
    await waitFor(async () => (await lockFiles(world)).length === 0, 60_000)
    expect(await taskFiles(world)).toContain(`${id}.json`)
  } finally {
    await close()
  }
}, 90_000)

test("a timeout aborts the session, records timed_out with what changed, and unlocks", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world, { bridgeTimeoutMs: 3000 })
  try {
    const out = structured(
      await client.callTool({ name: "worker", arguments: { cwd: repo, task: "Slow work [script:long]" } }),
    )
    expect(out.status).toBe("timed_out")
    expect(out.next).toContain("3s budget")
    expect(out.files_changed).toEqual([])
    expect(await lockFiles(world)).toEqual([])
    expect((await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${out.task_id}.json`))?.status).toBe("timed_out")
  } finally {
    await close()
  }
}, 90_000)

test("an impossible budget is refused before any record, lock or session", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world, { bridgeTimeoutMs: 1_470_000 })
  try {
    const tasks = await taskFiles(world)
    const requests = world.model.requests.length
    const result = await client.callTool({
      name: "worker",
      arguments: { cwd: repo, task: "secret-brief-words [script:edit]" },
    })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain("worker: the operation budget of 1470s")
    expect(text(result)).toContain("40s reserve")
    expect(text(result)).not.toContain("secret-brief-words")
    expect(await taskFiles(world)).toEqual(tasks)
    expect(await lockFiles(world)).toEqual([])
    expect(world.model.requests.length).toBe(requests)
  } finally {
    await close()
  }
}, 30_000)

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return
    await Bun.sleep(50)
  }
  throw new Error("condition not met in time")
}

test("a worker that plants git metadata through its shell ends needs_review with a warning naming it", async () => {
  const repo = await makeRepo(world)
  const { client, close } = await connect(world)
  try {
    const result = await client.callTool({
      name: "worker",
      arguments: { cwd: repo, task: "Vendor the library. [script:plant]" },
    })
    const out = structured(result)
    expect(world.model.toolResults().some((r) => r.tool === "sandbox_shell" && r.output.includes("planted"))).toBe(true)
    expect(out.status).toBe("needs_review")
    expect(String(out.warnings)).toContain("vendor/lib/.git")
    expect(text(result)).toContain(
      "warning: Files that other programs run on their own appeared or changed in the workspace: vendor/lib/.git (new)",
    )
    expect(await lockFiles(world)).toEqual([])
  } finally {
    await close()
  }
}, 90_000)
