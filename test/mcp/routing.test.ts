// Routing with fallback on the real OpenCode with the scripted model: config.json gives scout and worker an
// ordered list of models, and the scripted provider refuses `scripted/fast` (a spent quota, a refused key)
// while `scripted/second` answers. A refusal before any step moves to the next route in a fresh session,
// said in progress and in the result (model, fallback_from); the controls: a model the parent named is never
// replaced, a refusal after a step has run never moves, and a list of one fails as a single model does. The
// ledger (stats) counts each route.
import { expect, test } from "bun:test"
import { agentName } from "../../src/agents/names"
import { newTaskId } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { writeJson } from "../../src/util/fs"
import { spawn } from "../../src/util/process"
import { battery, connect, makeRepo, structured } from "./_battery"

const NO_TOKENS = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
const FIRST = "scripted/fast"
const SECOND = "scripted/second"
const ROUTES = { scout: [FIRST, SECOND], worker: [FIRST, SECOND] }
// `fast` refuses, every time and in every session; `second` plays the step.
const refuse = (kind: "quota" | "401") => ({ kind, times: "always", model: "fast", per: "server" }) as const

const { world, mcp, call, recordOf, withConfig } = battery(
  {
    quota: { turns: [{ steps: [{ text: "answered on the second route", fail: refuse("quota") }] }] },
    bad_key: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "routed.txt", content: "second\n" }, fail: refuse("401") },
            { text: "wrote it on the second route" },
          ],
        },
      ],
    },
    continued: {
      turns: [{ steps: [{ text: "first turn on fast" }] }, { steps: [{ text: "never", fail: refuse("401") }] }],
    },
    late_edit: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "late.txt", content: "fast\n" } },
            { text: "never", fail: refuse("401") },
          ],
        },
      ],
    },
    late: {
      turns: [
        {
          steps: [
            { tool: "read", args: { filePath: "README.md" } },
            { text: "never", fail: refuse("401") },
          ],
        },
      ],
    },
  },
  { models: ROUTES },
)

/** The models a script's step requests asked for, in order, one entry per session. */
const modelsHit = (script: string) => {
  const seen = new Map<string | undefined, string>()
  for (const r of world.model.requests)
    if (r.play.kind !== "title" && r.play.script === script && !seen.has(r.sessionId))
      seen.set(r.sessionId, r.body.model)
  return [...seen.values()]
}

test("a scout refused for its quota on the first route moves to the second and succeeds, saying both", async () => {
  const repo = await makeRepo(world)
  const result = await call("scout", { cwd: repo, task: "[script:quota] look" })
  expect(result.status).toBe("succeeded")
  expect(result.report).toBe("answered on the second route")
  expect(result.model).toBe(SECOND)
  const from = result.fallback_from as { model: string; why: string }[]
  expect(from.map((f) => f.model)).toEqual([FIRST])
  expect(from[0]!.why).toStartWith("quota: ")
  expect(from[0]!.why).toContain("exceeded your current quota")
  const record = await recordOf(result.task_id)
  expect(record.progress).toContain(`model ${FIRST} refused (quota): trying ${SECOND}`)
  // A fresh session on the next model: the first was asked once per OpenCode retry, never past its refusal.
  expect(modelsHit("quota")).toEqual(["fast", "second"])
  expect(record.sessions.length).toBe(2)
}, 120_000)

test("a worker refused for its key before any step falls back too, and its edit is made on the second route", async () => {
  const repo = await makeRepo(world)
  const result = await call("worker", { cwd: repo, task: "[script:bad_key] edit" })
  expect(result.status).toBe("succeeded")
  expect(result.model).toBe(SECOND)
  expect((result.fallback_from as { why: string }[])[0]!.why).toStartWith("auth: ")
  expect(await Bun.file(`${repo}/routed.txt`).text()).toBe("second\n")
  expect(modelsHit("bad_key")).toEqual(["fast", "second"])
}, 120_000)

test("control: a model the parent named is never replaced; it fails as auth on that model alone", async () => {
  const repo = await makeRepo(world)
  world.model.reset()
  const result = await call("worker", { cwd: repo, task: "[script:bad_key] edit", model: FIRST })
  expect(result.status).toBe("failed")
  expect(result.error_kind).toBe("auth")
  expect(result.fallback_from).toBeUndefined()
  expect(modelsHit("bad_key")).toEqual(["fast"])
  expect(await Bun.file(`${repo}/routed.txt`).exists()).toBe(false)
}, 120_000)

test("control: a refusal after the first step has run never moves (the agent may have acted)", async () => {
  const repo = await makeRepo(world)
  const result = await call("scout", { cwd: repo, task: "[script:late] look" })
  expect(result.status).toBe("failed")
  expect(result.error_kind).toBe("auth")
  expect(result.fallback_from).toBeUndefined()
  expect(result.steps).toBeGreaterThanOrEqual(1)
  expect(modelsHit("late")).toEqual(["fast"])
}, 120_000)

test("control: a worker whose edit ran before the refusal never moves: the edit stays, the refusal stands", async () => {
  const repo = await makeRepo(world)
  const result = await call("worker", { cwd: repo, task: "[script:late_edit] edit" })
  expect(result).toMatchObject({ status: "failed", error_kind: "auth" })
  expect(result.fallback_from).toBeUndefined()
  expect(await Bun.file(`${repo}/late.txt`).text()).toBe("fast\n")
  expect(modelsHit("late_edit")).toEqual(["fast"])
}, 120_000)

test("control: a task_continue turn refused never moves (a fresh session would lose the conversation)", async () => {
  const repo = await makeRepo(world)
  const first = await call("worker", { cwd: repo, task: "[script:continued] edit" })
  expect(first).toMatchObject({ status: "succeeded", model: FIRST })
  const again = await call("task_continue", { task_id: first.task_id, task: "[script:continued] again" })
  expect(again).toMatchObject({ status: "failed", error_kind: "auth" })
  expect(again.fallback_from).toBeUndefined()
  // Both turns on fast (the second in the parked copy of the first's session); second never asked.
  expect(modelsHit("continued")).not.toContain("second")
}, 120_000)

test("the models tool shows each role's list: the first model, then its fallbacks", async () => {
  const roles = structured(await mcp.client.callTool({ name: "models", arguments: {} })).roles as Record<
    string,
    { model?: string; fallbacks?: string[] }
  >
  expect(roles.scout).toMatchObject({ model: FIRST, fallbacks: [SECOND] })
  expect(roles.runner!.fallbacks).toBeUndefined()
}, 60_000)

test("control: a list of one behaves as a single model does: the refusal is the result", async () => {
  await withConfig({ models: { ...ROUTES, worker: [FIRST] } }, async () => {
    const repo = await makeRepo(world)
    world.model.reset()
    const result = await call("worker", { cwd: repo, task: "[script:bad_key] edit" })
    expect(result.status).toBe("failed")
    expect(result.error_kind).toBe("auth")
    expect(result.model ?? FIRST).toBe(FIRST)
    expect(result.fallback_from).toBeUndefined()
    expect(modelsHit("bad_key")).toEqual(["fast"])
  })
}, 120_000)

/** A scout's record as a process SIGKILLed before its session existed left it: `fields` say on which route. */
async function plant(brief: string, pid: number, fields: Partial<TaskRecord>) {
  const id = newTaskId()
  const now = new Date().toISOString()
  const record: TaskRecord = {
    ...{ version: 1, id, role: "scout", agent: agentName("scout"), workspace: await makeRepo(world) },
    ...{ title: `scout: look [${id}]`, writable: false, status: "running", sessions: [], ownerPid: pid },
    ...{ createdAt: now, turnStartedAt: now, updatedAt: now, deadline: Date.now() + 60_000, operationMs: 60_000 },
    ...{ brief, turns: 1, revision: 0, progress: [], ...fields },
  }
  await writeJson(`${world.home.paths.tasksDir}/${id}.json`, record)
  return id
}

test("SIGKILL before or after the move: the process taking the task over keeps its routes and where it was", async () => {
  const dead = spawn(["true"])
  await dead.exited
  const [fast, second] = [
    { providerID: "scripted", modelID: "fast" },
    { providerID: "scripted", modelID: "second" },
  ]
  const left = { model: FIRST, why: "quota: spent", kind: "quota", tokens: { ...NO_TOKENS }, cost: 0 }
  const before = await plant("[script:quota] look", dead.pid, { route: fast, fallbacks: [second] })
  const after = await plant("[script:quota] look", dead.pid, { route: second, fallbackFrom: [left] })
  // Control: the same refusal on a record without routes left ends as the refusal.
  const none = await plant("[script:bad_key] look", dead.pid, { route: fast })
  const taker = await connect(world)
  try {
    const finished = async (id: string) => {
      await call("task_status", { task_id: id, wait_seconds: 20 }, taker)
      return call("task_result", { task_id: id }, taker)
    }
    const [moved, resumed, stays] = await Promise.all([before, after, none].map(finished))
    expect(moved).toMatchObject({ status: "succeeded", model: SECOND })
    expect((moved!.fallback_from as { model: string }[]).map((f) => f.model)).toEqual([FIRST])
    expect(resumed).toMatchObject({ status: "succeeded", model: SECOND, fallback_from: [{ model: FIRST }] })
    expect(stays).toMatchObject({ status: "failed", error_kind: "auth" })
    expect(stays!.fallback_from).toBeUndefined()
  } finally {
    await taker.close()
  }
}, 120_000)

test("the ledger counts each route: the refused model's attempts beside the model that answered", async () => {
  type Row = { role: string; model: string; tasks: number; succeeded: number }
  const stats = structured(await mcp.client.callTool({ name: "stats", arguments: { since: "1h" } })) as unknown as {
    rows: Row[]
    total: { tasks: number; succeeded: number }
  }
  const find = (role: string, model: string) => stats.rows.find((r) => r.role === role && r.model === model)
  // scout: the quota task left fast (not succeeded there) and succeeded on second; the late one failed on fast.
  // Beside the three tasks taken over: two moved from fast to second, one failed on fast.
  expect(find("scout", SECOND)).toMatchObject({ tasks: 3, succeeded: 3 })
  expect(find("scout", FIRST)).toMatchObject({ tasks: 5, succeeded: 0 })
  expect(find("worker", SECOND)).toMatchObject({ tasks: 1, succeeded: 1 })
  // Each task counts once in the total, whatever routes it took.
  expect(stats.total.tasks).toBe(10)
  expect(stats.total.succeeded).toBe(4)
}, 60_000)
