// One owner per task at a time. A compiled `serve` running delegate_parallel (6 isolated workers, cap 2)
// is SIGKILLed while 4 members wait: its watchdog and, at once, a second serve both look for the tasks
// it left. Each member must run exactly once (one session, one conversation's model requests), never
// two sessions in one worktree, never more busy sessions than the cap; members still queued are queued
// again. Also planted: tasks left by a dead process before their sessions existed, taken over by three
// processes at once (two watchdogs and a serve): the race that failed a reverted re-queue in CI, where
// the watchdog of the previous test's serve, started as that serve closed, took over the next test's
// planted record beside the new serve, and the brief ran in two sessions (before: 2-3 sessions each).
// Controls: the same fan-out without a kill, and one taker alone.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { newTaskId } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { textOf } from "../../src/model/conversation"
import { createRepository } from "../../src/model/demo"
import type { IsolatedHome } from "../../src/model/home"
import type { ScriptedModel } from "../../src/model/server"
import { writeJson } from "../../src/util/fs"
import { alive, spawn } from "../../src/util/process"
import { BINARY, connectStdio, type Connected } from "../helpers/mcp"
import { startHome, stopHome, type HomeWorld } from "../helpers/world"
import { until } from "../helpers/until"
import { orphanRecord, taskRecords } from "../helpers/records"
import { busySampler } from "../helpers/busy"
import { watchdogOf } from "../helpers/leftovers"

const STEP_MS = 2000
const CAP = 2
let world: HomeWorld
let model: ScriptedModel
let home: IsolatedHome

beforeAll(async () => {
  world = await startHome(
    {
      // Two model answers of STEP_MS each: a member's session is busy for a few seconds.
      edit: {
        turns: [
          {
            steps: [
              { tool: "write", args: { filePath: "member.txt", content: "member\n" }, delayMs: STEP_MS },
              { text: "member report", delayMs: STEP_MS },
            ],
          },
        ],
      },
      look: {
        turns: [
          {
            steps: [
              { tool: "glob", args: { pattern: "*.md" }, delayMs: STEP_MS },
              { text: "look report", delayMs: STEP_MS },
            ],
          },
        ],
      },
    },
    { config: { maxParallel: CAP } },
  )
  ;({ model, home } = world)
})

afterAll(async () => {
  await stopHome(world)
})

const serve = () => connectStdio({ ...home.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "1000" })

const records = () => taskRecords(home.paths.tasksDir)

async function repo(): Promise<string> {
  const dir = await createRepository("oc-orch-takeover-", { "README.md": "# r\n" })
  world.dirs.push(dir)
  return dir
}

const sampler = (mine: () => Promise<TaskRecord[]>) =>
  busySampler(home.paths, async () => (await mine()).map((record) => record.workspace))

/** The scripted model's step requests of one member, told apart by the tag in its brief. */
function conversationOf(tag: string) {
  const requests = model
    .stepRequests()
    .filter((request) =>
      request.body.messages.some((message) => message.role === "user" && textOf(message).includes(tag)),
    )
  return { requests: requests.length, sessions: new Set(requests.map((request) => request.sessionId)).size }
}

let members = 0
const newTags = (count: number) => Array.from({ length: count }, () => `member-${++members}-${process.pid}`)

type Kill = "none" | "watchdog alone" | "watchdog and successor"

/** 6 isolated workers under cap 2; with a kill, the serve is SIGKILLed while the first two run and 4 wait. */
async function fanOut(kill: Kill) {
  const cwd = await repo()
  const before = new Set((await records()).map((record) => record.id))
  const mine = async () => (await records()).filter((record) => !before.has(record.id))
  const tags = newTags(6)
  const first = await serve()
  let successor: Connected | undefined
  const sampled = sampler(mine)
  try {
    const briefs = tags.map((tag) => ({ role: "worker", cwd, task: `Write the member file (${tag}). [script:edit]` }))
    const call = first.client.callTool(
      { name: "delegate_parallel", arguments: { briefs } },
      {
        timeout: 600_000,
      },
    )
    if (kill === "none") await call
    else {
      void call.catch(() => undefined)
      expect(await until(async () => sampled.total() >= CAP && (await mine()).length === 6, 60_000)).toBe(true)
      // The first two work, the other four wait for a slot.
      expect((await mine()).filter((record) => record.sessions.length === 0)).toHaveLength(4)
      const watchdog = await watchdogOf(first.pid)
      expect(watchdog).toBeDefined()
      process.kill(first.pid, "SIGKILL")
      expect(await until(() => !alive(first.pid), 10_000)).toBe(true)
      // At once, racing the watchdog for the same records.
      if (kill === "watchdog and successor") successor = await serve()
      await successor?.client.callTool({ name: "task_list", arguments: {} })
    }
    expect(
      await until(
        async () => (await mine()).length === 6 && (await mine()).every((record) => record.status !== "running"),
        150_000,
      ),
    ).toBe(true)
    return { ended: await mine(), conversations: tags.map(conversationOf), sampled: await sampled.stop() }
  } finally {
    await sampled.stop()
    await first.close().catch(() => undefined)
    await successor?.close()
  }
}

function expectEachOnce(result: Awaited<ReturnType<typeof fanOut>>) {
  expect(result.ended.map((record) => record.status)).toEqual(Array(6).fill("succeeded"))
  expect(result.ended.map((record) => record.result?.report)).toEqual(Array(6).fill("member report"))
  // Exactly once: one session per member, and its two scripted steps asked for once each.
  expect(result.conversations).toEqual(Array(6).fill({ requests: 2, sessions: 1 }))
  expect(result.sampled.perWorkspace).toBe(1)
  expect(result.sampled.total).toBe(CAP)
}

test("control: the fan-out without a kill runs each member once, one session per worktree, at most 2 at once", async () => {
  expectEachOnce(await fanOut("none"))
}, 200_000)

test("attack: SIGKILL while 4 wait, no successor: the watchdog alone runs each member once, the queued ones under the cap", async () => {
  expectEachOnce(await fanOut("watchdog alone"))
}, 200_000)

test("attack: SIGKILL while 4 wait, a successor at once: watchdog and successor never both run a member", async () => {
  const result = await fanOut("watchdog and successor")
  expectEachOnce(result)
}, 200_000)

/** Records of parallel scouts a dead process left before their sessions existed, still queued. */
async function plantQueued(count: number) {
  const cwd = await repo()
  const dead = spawn(["true"])
  await dead.exited
  const tags = newTags(count)
  const ids: string[] = []
  for (const [index, tag] of tags.entries()) {
    const id = newTaskId()
    ids.push(id)
    const now = new Date(Date.now() - 120_000).toISOString()
    const record = orphanRecord(id, now, {
      workspace: cwd,
      ownerPid: dead.pid,
      // Every other one waited in the queue past its first deadline: a member's deadline starts with its slot.
      deadline: index % 2 === 0 ? Date.now() - 1 : Date.now() + 60_000,
      brief: `Look around (${tag}). [script:look]`,
      parallel: true,
    })
    await writeJson(`${home.paths.tasksDir}/${id}.json`, record)
  }
  return { dead: dead.pid, ids, tags, cwd }
}

async function takeOverPlanted(takers: number) {
  const { dead, ids, tags } = await plantQueued(3)
  const mine = async () => (await records()).filter((record) => ids.includes(record.id))
  const sampled = sampler(mine)
  // Watchdogs of the dead process, as a serve starts them, and a serve: all three look at once.
  const watchdogs = Array.from({ length: takers - 1 }, () =>
    spawn([BINARY, "supervise", "--parent", String(dead)], { env: home.env }),
  )
  const next = await serve()
  try {
    await next.client.callTool({ name: "task_list", arguments: {} })
    expect(await until(async () => (await mine()).every((record) => record.status !== "running"), 120_000)).toBe(true)
    return { ended: await mine(), conversations: tags.map(conversationOf), sampled: await sampled.stop() }
  } finally {
    await sampled.stop()
    await next.close()
    for (const watchdog of watchdogs) await watchdog.exited
  }
}

test("control: one taker starts each planted queued member once, under the cap, though its first deadline passed", async () => {
  const { ended, conversations, sampled } = await takeOverPlanted(1)
  expect(ended.map((record) => [record.status, record.result?.report])).toEqual(
    Array(3).fill(["succeeded", "look report"]),
  )
  expect(conversations).toEqual(Array(3).fill({ requests: 2, sessions: 1 }))
  expect(sampled.total).toBeLessThanOrEqual(CAP)
}, 150_000)

test("attack: three takers at once (two watchdogs, a serve): each planted member runs once, its brief sent once", async () => {
  const { ended, conversations, sampled } = await takeOverPlanted(3)
  expect(ended.map((record) => [record.status, record.result?.report])).toEqual(
    Array(3).fill(["succeeded", "look report"]),
  )
  expect(ended.every((record) => record.sessions.length === 1)).toBe(true)
  expect(conversations).toEqual(Array(3).fill({ requests: 2, sessions: 1 }))
  expect(sampled.total).toBeLessThanOrEqual(CAP)
}, 150_000)
