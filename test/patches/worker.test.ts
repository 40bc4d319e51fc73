// worker with isolation "worktree" on the real OpenCode, the scripted model and the sandbox: the
// worker's shell makes every kind of change in its snapshot, the user's tree and `.git` stay as they
// were, the patch round-trips exactly through patch_apply, and patch_discard leaves nothing behind.
import { expect, test } from "bun:test"
import { existsSync } from "node:fs"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { readJson } from "../../src/util/fs"
import { fileWorld } from "../mcp/_file-world"
import { connect, lockFiles, structured, text } from "../mcp/_setup"
import { dirtyRepo, EVERY_CHANGE_SHELL, fingerprintTree, listing } from "./_repo"
import { LONG_TASK } from "../helpers/long-task"
import { apply, discard } from "../helpers/patch-tools"
import { scratch } from "../helpers/world"

const world = fileWorld({
  every: {
    turns: [
      {
        steps: [
          { tool: "sandbox_shell", args: { command: EVERY_CHANGE_SHELL } },
          { text: "Done: every kind of change made." },
        ],
      },
    ],
  },
  long: LONG_TASK,
  big: {
    turns: [
      {
        steps: [
          {
            tool: "sandbox_shell",
            args: {
              command:
                "mkdir -p data && head -c 1500000 /dev/urandom > data/big.bin && echo small > small.txt && echo wrote",
            },
          },
          { text: "Wrote big.bin." },
        ],
      },
    ],
  },
  peek: {
    turns: [
      {
        steps: [
          { tool: "sandbox_shell", args: { command: "ls ../git" } },
          { tool: "sandbox_shell", args: { command: "ls -d ." } },
          { text: "Looked around; changed nothing." },
        ],
      },
      {
        steps: [
          { tool: "write", args: { filePath: "second.txt", content: "second turn\n" } },
          { text: "Added second.txt." },
        ],
      },
    ],
  },
})
const notLogs = (path: string) => path.endsWith(".log")

async function repo(): Promise<string> {
  const dir = await scratch(world, "oc-orch-iso-")
  return dirtyRepo(`${dir}/repo`)
}

interface PatchOut {
  patch_id: string
  digest: string
  summary: string
  files: Array<{ path: string; change: string; binary: boolean; old_path?: string }>
}

test("an isolated worker leaves the user's tree and .git alone; its patch applies exactly; patch_discard removes it and its worktree", async () => {
  const cwd = await repo()
  const tree = await listing(cwd)
  const metadata = await fingerprintTree(`${cwd}/.git`)
  const { client, close } = await connect(world)
  try {
    const result = await client.callTool({
      name: "worker",
      arguments: { cwd, task: "Make every kind of change. [script:every]", isolation: "worktree" },
    })
    const out = structured(result)
    // A mode change and new root-level data files are named by the autorun rules: needs_review, each named.
    expect(out.status).toBe("needs_review")
    const flagged = (out.autorun as { files: { path: string; rule: string }[] }).files.map((file) => file.path)
    expect(flagged).toEqual(expect.arrayContaining(["README.md", "new.bin"]))
    const patch = out.patch as PatchOut
    expect(patch.patch_id).toMatch(/^patch_/)
    expect(patch.files.map((file) => file.path)).toContain("added dir/ünï cödé.txt")
    expect(patch.files.find((file) => file.path === "new name.txt")?.old_path).toBe("old name.txt")
    expect(out.files_changed).toContainEqual({ path: "del.txt", change: "deleted" })
    expect(text(result)).toContain(`patch: ${patch.patch_id}`)
    expect(await listing(cwd)).toEqual(tree)
    expect(await fingerprintTree(`${cwd}/.git`)).toBe(metadata)
    const record = await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${out.task_id}.json`)
    const worktree = record!.workspace
    expect(worktree).toMatch(new RegExp(`^${world.home.paths.worktreesDir}/lane-[0-9]+/tree$`))

    const whole = structured(
      await client.callTool({ name: "patch_show", arguments: { patch_id: patch.patch_id, limit: 1000 } }),
    )
    expect(whole.digest).toBe(patch.digest)
    expect(whole.next_offset).toBe(1000)
    const one = structured(
      await client.callTool({ name: "patch_show", arguments: { patch_id: patch.patch_id, file: "img.bin" } }),
    )
    expect(String(one.diff)).toContain("GIT binary patch")
    expect(String(one.diff)).not.toContain("README.md")

    const stale = await apply(client, patch, { digest: "0".repeat(64) })
    expect(stale.isError).toBe(true)
    expect(text(stale)).toContain("digest")
    expect(await listing(cwd)).toEqual(tree)

    // dir/keep.txt turns from a file into a link: refused, named with its target, until allow_links says so.
    const linked = await apply(client, patch)
    expect(linked.isError).toBe(true)
    expect(text(linked)).toContain("dir/keep.txt → ../README.md (it turns a file into a link)")
    expect(await listing(cwd)).toEqual(tree)
    const applied = await apply(client, patch, { allow_links: true })
    expect(applied.isError).toBeFalsy()
    expect(await listing(cwd, notLogs)).toEqual(await listing(worktree, notLogs))
    expect(await fingerprintTree(`${cwd}/.git`)).toBe(metadata)

    const listed = structured(await client.callTool({ name: "task_list", arguments: { cwd } })) as unknown as {
      patches: Array<{ patch_id: string; files: number; bytes: number }>
      tasks: Array<{ task_id: string }>
    }
    expect(listed.patches).toEqual([expect.objectContaining({ patch_id: patch.patch_id, files: patch.files.length })])
    // The worker ran in its worktree, but is listed under the workspace it was asked for.
    expect(listed.tasks.map((task) => task.task_id)).toContain(String(out.task_id))
    expect(listed.patches[0]!.bytes).toBeGreaterThan(0)

    const discarded = await discard(client, patch.patch_id)
    expect(discarded.isError).toBeFalsy()
    expect(existsSync(worktree)).toBe(false)
    expect(existsSync(`${world.home.paths.patchesDir}/${patch.patch_id}.json`)).toBe(false)
    expect(existsSync(`${world.home.paths.patchesDir}/${patch.patch_id}.patch`)).toBe(false)
    expect((await client.callTool({ name: "patch_show", arguments: { patch_id: patch.patch_id } })).isError).toBe(true)
    expect(structured(await client.callTool({ name: "task_list", arguments: { cwd } })).patches).toBeUndefined()
    expect(await fingerprintTree(`${cwd}/.git`)).toBe(metadata)
  } finally {
    await close()
  }
}, 120_000)

test("a caller cannot point a delegation at an isolated worktree", async () => {
  const cwd = await repo()
  const { client, close } = await connect(world)
  try {
    const out = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd, task: "Make every kind of change. [script:every]", isolation: "worktree" },
      }),
    )
    const record = await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${out.task_id}.json`)
    const refused = await client.callTool({ name: "scout", arguments: { cwd: record!.workspace, task: "look" } })
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain("credential store")
  } finally {
    await close()
  }
}, 120_000)

test("the worker's sandbox shows no Git directory; task_continue works in the same worktree and collects a new patch, the old digest then refused", async () => {
  const cwd = await repo()
  const tree = await listing(cwd)
  const { client, close } = await connect(world)
  try {
    const first = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd, task: "Look around. [script:peek]", isolation: "worktree" },
      }),
    )
    expect(first.status).toBe("succeeded")
    // The private Git directory sits beside the worktree on the host, and is not in the sandbox.
    expect(first.commands).toEqual([
      { command: "ls ../git", exit_code: 2 },
      { command: "ls -d .", exit_code: 0 },
    ])
    const empty = first.patch as PatchOut
    expect(empty.files).toEqual([])
    expect(String(first.next)).toContain("changed nothing")

    const again = structured(
      await client.callTool({ name: "task_continue", arguments: { task_id: first.task_id, task: "Add second.txt." } }),
    )
    expect(again.status).toBe("succeeded")
    const patch = again.patch as PatchOut
    expect(patch.patch_id).toBe(empty.patch_id)
    expect(patch.files.map((file) => [file.path, file.change])).toEqual([["second.txt", "added"]])
    expect(patch.digest).not.toBe(empty.digest)
    expect(await listing(cwd)).toEqual(tree)

    const stale = await apply(client, patch, { digest: empty.digest })
    expect(stale.isError).toBe(true)
    expect((await apply(client, patch)).isError).toBeFalsy()
    expect(await Bun.file(`${cwd}/second.txt`).text()).toBe("second turn\n")
    expect((await discard(client, patch.patch_id)).isError).toBeFalsy()
  } finally {
    await close()
  }
}, 120_000)

test("patch_apply is refused while an in-place worker holds the workspace, and applies once that worker is cancelled", async () => {
  const cwd = await repo()
  const { client, close } = await connect(world, { syncBudgetMs: 1500 })
  try {
    let isolated = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd, task: "Make every kind of change. [script:every]", isolation: "worktree" },
      }),
    )
    // The short sync budget is for the in-place writer below; on a loaded machine this one may outlast it.
    for (let polls = 0; isolated.status === "running" && polls < 10; polls++) {
      const id = isolated.task_id
      await client.callTool({ name: "task_status", arguments: { task_id: id, wait_seconds: 20 } })
      isolated = structured(await client.callTool({ name: "task_result", arguments: { task_id: id } }))
    }
    // Needs review only for the files the autorun rules name (see the first test).
    expect(isolated.status).toBe("needs_review")
    const patch = isolated.patch as PatchOut
    const writer = structured(
      await client.callTool({ name: "worker", arguments: { cwd, task: "Slow in-place work [script:long]" } }),
    )
    expect(writer.status).toBe("running")
    const before = await listing(cwd)
    const held = await apply(client, patch)
    expect(held.isError).toBe(true)
    expect(text(held)).toContain(`held by task ${writer.task_id}`)
    expect(await listing(cwd)).toEqual(before)
    expect(
      structured(await client.callTool({ name: "task_cancel", arguments: { task_id: writer.task_id } })).status,
    ).toBe("cancelled")
    expect((await apply(client, patch, { allow_links: true })).isError).toBeFalsy()
    expect(await Bun.file(`${cwd}/new name.txt`).exists()).toBe(true)
    expect(await lockFiles(world)).toEqual([])
  } finally {
    await close()
  }
}, 120_000)

test("patch_discard is refused while the isolated worker runs; a cancelled isolated worker still returns its patch", async () => {
  const cwd = await repo()
  const { client, close } = await connect(world, { syncBudgetMs: 1500 })
  try {
    const running = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd, task: "Slow isolated work [script:long]", isolation: "worktree" },
      }),
    )
    expect(running.status).toBe("running")
    const record = await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${running.task_id}.json`)
    const patchId = record!.isolation!.patchId
    const refused = await discard(client, patchId)
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain(`${running.task_id}, which is still running`)
    expect(existsSync(record!.workspace)).toBe(true)
    const cancelled = structured(
      await client.callTool({ name: "task_cancel", arguments: { task_id: running.task_id } }),
    )
    expect(cancelled.status).toBe("cancelled")
    expect((cancelled.patch as PatchOut).patch_id).toBe(patchId)
    expect((cancelled.patch as PatchOut).files).toEqual([])
    expect((await discard(client, patchId)).isError).toBeFalsy()
    expect(existsSync(record!.workspace)).toBe(false)
  } finally {
    await close()
  }
}, 120_000)

test("a patch over maxPatchBytes is not stored: the worker ends needs_review with the reason and the next step, its worktree kept; control: under the cap it is stored", async () => {
  const cwd = await repo()
  const config = await Bun.file(world.home.paths.configFile).json()
  const { client, close } = await connect(world)
  try {
    const stored = structured(
      await client.callTool({
        name: "worker",
        arguments: { cwd, task: "Write a big file. [script:big]", isolation: "worktree" },
      }),
    )
    expect(stored.status).toBe("succeeded")
    const under = stored.patch as PatchOut
    expect(existsSync(`${world.home.paths.patchesDir}/${under.patch_id}.patch`)).toBe(true)
    expect((await discard(client, under.patch_id)).isError).toBeFalsy()

    await Bun.write(world.home.paths.configFile, JSON.stringify({ ...config, maxPatchBytes: 1024 * 1024 }))
    const result = await client.callTool({
      name: "worker",
      arguments: { cwd, task: "Write a big file. [script:big]", isolation: "worktree" },
    })
    const out = structured(result)
    expect(out.status).toBe("needs_review")
    expect(out.patch).toBeUndefined()
    expect(text(result)).toMatch(
      /warning: The worker's edits could not be collected as a patch: The patch was not stored: the worker's changes make a \d+-byte patch, more than maxPatchBytes \(1048576\)/,
    )
    expect(String(out.next)).toContain("raise maxPatchBytes in config.json")
    const record = await readJson<TaskRecord>(`${world.home.paths.tasksDir}/${out.task_id}.json`)
    const patchId = record!.isolation!.patchId
    expect(existsSync(`${world.home.paths.patchesDir}/${patchId}.patch`)).toBe(false)
    expect(existsSync(`${record!.workspace}/data/big.bin`)).toBe(true)
    const shown = await client.callTool({ name: "patch_show", arguments: { patch_id: patchId } })
    expect(shown.isError).toBe(true)
    expect(text(shown)).toContain("was not stored")
    expect((await discard(client, patchId)).isError).toBeFalsy()
    expect(existsSync(record!.workspace)).toBe(false)
  } finally {
    await Bun.write(world.home.paths.configFile, JSON.stringify(config))
    await close()
  }
}, 120_000)
