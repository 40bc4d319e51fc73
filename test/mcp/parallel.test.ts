// delegate_parallel on the real OpenCode with the scripted model: isolated workers in parallel produce
// patches that all apply, same-line edits are flagged, and the maxParallel cap holds across two MCP
// servers on one state dir (measured from when the scripted model served each session).
import { afterAll, beforeAll, expect, test } from "bun:test"
import { readFile } from "node:fs/promises"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { createRepository } from "../../src/model/demo"
import type { ScriptInput } from "../../src/model/script"
import { readJson } from "../../src/util/fs"
import { connect, startWorld, stopWorld, structured, type World } from "./_setup"

const STEP_MS = 400
let world: World

/** A worker that rewrites `path` with `content`, each model answer taking STEP_MS. */
const writes = (path: string, content: string): ScriptInput => ({
  turns: [
    {
      steps: [
        { tool: "write", args: { filePath: path, content }, delayMs: STEP_MS },
        { text: `Rewrote ${path}.`, delayMs: STEP_MS },
      ],
    },
  ],
})

const FILES = ["a.txt", "b.txt", "c.txt", "d.txt"]

beforeAll(async () => {
  const scripts: Record<string, ScriptInput> = {
    same1: writes("a.txt", "one\nfrom the first\n"),
    same2: writes("a.txt", "one\nfrom the second\n"),
  }
  for (const file of FILES) scripts[`w_${file[0]}`] = writes(file, `${file} rewritten\n`)
  scripts.slow = { turns: [{ steps: [{ text: "too late", delayMs: 120_000 }] }] }
  world = await startWorld(scripts, { maxParallel: 2 })
})

afterAll(() => stopWorld(world))

async function repo(): Promise<string> {
  const dir = await createRepository(
    "oc-orch-par-",
    Object.fromEntries(FILES.map((file) => [file, `${file}\noriginal\n`])),
  )
  world.dirs.push(dir)
  return dir
}

interface Member {
  task_id: string
  status: string
  report: string
  patch?: { patch_id: string; digest: string; files: Array<{ path: string }> }
}
interface Group {
  group_id: string
  status: string
  tasks: Member[]
  overlaps: Array<{ path: string; task_ids: string[] }>
}

const workerBriefs = (cwd: string, scripts: string[]) =>
  scripts.map((script) => ({ role: "worker", cwd, task: `Rewrite the file. [script:${script}]` }))

/** The most sessions the scripted model served at once: each from its first request to its last answer. */
function busiest(world: World, since: number): number {
  const spans = new Map<string, [number, number]>()
  for (const request of world.model.stepRequests()) {
    if (request.at < since || !request.sessionId) continue
    const span = spans.get(request.sessionId) ?? [request.at, request.at]
    spans.set(request.sessionId, [Math.min(span[0], request.at), Math.max(span[1], request.at + STEP_MS)])
  }
  const events = [...spans.values()].flatMap(([start, end]) => [
    [start, 1],
    [end, -1],
  ])
  // An end before a start at the same instant: a slot handed on is not two sessions at once.
  events.sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!)
  let busy = 0
  let most = 0
  for (const [, delta] of events) {
    busy += delta!
    most = Math.max(most, busy)
  }
  return most
}

test("4 isolated workers on different files: 4 patches, no overlap, all apply; at most maxParallel ran at once; the queued ones said so", async () => {
  const cwd = await repo()
  const since = Date.now()
  const { client, close } = await connect(world)
  try {
    const out = structured(
      await client.callTool({
        name: "delegate_parallel",
        arguments: { briefs: workerBriefs(cwd, ["w_a", "w_b", "w_c", "w_d"]) },
      }),
    ) as unknown as Group
    expect(out.status).toBe("finished")
    expect(out.tasks.map((task) => task.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"])
    expect(out.tasks.map((task) => task.patch?.files.map((file) => file.path))).toEqual(FILES.map((file) => [file]))
    expect(out.overlaps).toEqual([])
    for (const task of out.tasks) {
      const applied = await client.callTool({
        name: "patch_apply",
        arguments: { patch_id: task.patch!.patch_id, digest: task.patch!.digest },
      })
      expect(applied.isError).toBeFalsy()
    }
    for (const file of FILES) expect(await readFile(`${cwd}/${file}`, "utf8")).toBe(`${file} rewritten\n`)
    expect(busiest(world, since)).toBe(2)
    const records = await Promise.all(
      out.tasks.map((task) => readJson<TaskRecord>(`${world.home.paths.tasksDir}/${task.task_id}.json`)),
    )
    expect(
      records.flatMap((record) => record!.progress).filter((line) => /^queued \(\d+ ahead\)$/.test(line)).length,
    ).toBeGreaterThanOrEqual(2)
  } finally {
    await close()
  }
}, 180_000)

test("two workers rewriting the same lines are flagged as overlapping", async () => {
  const cwd = await repo()
  const { client, close } = await connect(world)
  try {
    const out = structured(
      await client.callTool({
        name: "delegate_parallel",
        arguments: { briefs: workerBriefs(cwd, ["same1", "same2"]) },
      }),
    ) as unknown as Group
    expect(out.status).toBe("finished")
    expect(out.overlaps).toEqual([
      { path: "a.txt", task_ids: expect.arrayContaining(out.tasks.map((task) => task.task_id)) },
    ])
    const first = out.tasks[0]!.patch!
    expect(
      (await client.callTool({ name: "patch_apply", arguments: { patch_id: first.patch_id, digest: first.digest } }))
        .isError,
    ).toBeFalsy()
    const second = out.tasks[1]!.patch!
    expect(
      (await client.callTool({ name: "patch_apply", arguments: { patch_id: second.patch_id, digest: second.digest } }))
        .isError,
    ).toBe(true)
  } finally {
    await close()
  }
}, 120_000)

test("two MCP servers on one state dir share the cap: 2 + 2 workers, never more than 2 sessions at once", async () => {
  const cwd = await repo()
  const since = Date.now()
  const one = await connect(world)
  const two = await connect(world)
  try {
    const results = await Promise.all([
      one.client.callTool({ name: "delegate_parallel", arguments: { briefs: workerBriefs(cwd, ["w_a", "w_b"]) } }),
      two.client.callTool({ name: "delegate_parallel", arguments: { briefs: workerBriefs(cwd, ["w_c", "w_d"]) } }),
    ])
    for (const result of results)
      expect((structured(result) as unknown as Group).tasks.map((task) => task.status)).toEqual([
        "succeeded",
        "succeeded",
      ])
    expect(busiest(world, since)).toBe(2)
  } finally {
    await one.close()
    await two.close()
  }
}, 180_000)

test("a group still running returns its group_id; following it answers the same shape; cancel stops every member, queued ones included", async () => {
  const cwd = await repo()
  const { client, close } = await connect(world, { syncBudgetMs: 1000 })
  try {
    const briefs = [0, 1, 2].map(() => ({ role: "scout", cwd, task: "Look slowly. [script:slow]" }))
    const started = structured(
      await client.callTool({ name: "delegate_parallel", arguments: { briefs } }),
    ) as unknown as Group
    expect(started.status).toBe("running")
    expect(started.group_id).toMatch(/^group_/)
    const followed = structured(
      await client.callTool({ name: "delegate_parallel", arguments: { group_id: started.group_id } }),
    ) as unknown as Group
    expect(followed.status).toBe("running")
    expect(followed.tasks.map((task) => task.task_id)).toEqual(started.tasks.map((task) => task.task_id))
    expect(followed.tasks.map((task) => task.report)).toContain("queued (0 ahead)")
    const cancelled = structured(
      await client.callTool({ name: "delegate_parallel", arguments: { group_id: started.group_id, cancel: true } }),
    ) as unknown as Group
    expect(cancelled.status).toBe("finished")
    expect(cancelled.tasks.map((task) => task.status)).toEqual(["cancelled", "cancelled", "cancelled"])
    expect((await client.callTool({ name: "delegate_parallel", arguments: {} })).isError).toBe(true)
  } finally {
    await close()
  }
}, 120_000)
