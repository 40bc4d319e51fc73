// h) Task records as they grow: task_list (limit 20), stats, an idempotent call's key lookup and a
//    store's open with its recovery pass, at 1,000, 10,000 and 100,000 records (5 of them unfinished),
//    through the index (src/engine/store/sqlite-index.ts) beside the path before (every record read and
//    validated; stats grouped with a copy per record), side by side in one run, reported as ratios.
//    `stats_since` starts its period inside a day (the part-day read from rows), beside the rows summed.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { summarize } from "../src/engine/ledger/ledger"
import { newTaskId } from "../src/engine/records/tasks"
import { isFinished } from "../src/engine/records/status"
import type { TaskRecord } from "../src/engine/records/record-schema"
import { TaskStore } from "../src/engine/store/task-store"
import { writeJson } from "../src/util/fs"

/** The goal: each call at the largest count at most this many times its time at the smallest. */
const FLAT_GOAL_RATIO = 2
const UNFINISHED = 5

function record(i: number, count: number): TaskRecord {
  const at = new Date(Date.parse("2026-11-01T00:00:00Z") + i * 1000).toISOString()
  const running = i >= count - UNFINISHED
  const status = running ? "running" : i % 7 ? "succeeded" : "failed"
  const workspace = `/work/repo-${i % 50}`
  const tokens = { input: 1200, output: 300, reasoning: 0, cacheRead: 800, cacheWrite: 0 }
  const result = { status, role: "scout", report: "Found it in src/a.ts:12.", model: "local/m", steps: 3, tokens }
  const fields = { cost: 0.002, durationMs: 1500 + (i % 900), workspace, tools: [{ tool: "read" }], commands: [] }
  return {
    ...{ version: 1, id: newTaskId(), role: "scout", agent: "opencode-orchestrator-scout", workspace },
    ...{ title: `bench ${i}`, writable: false, status, idempotencyKey: `bench-${i}`, sessions: [`ses_${i}`] },
    ...{ ownerPid: 2 ** 22 + 3, ownerStart: "x:1", createdAt: at, updatedAt: at, deadline: 0, operationMs: 0 },
    ...{ turns: 1, revision: 3, progress: ["step 1: read src/a.ts", "step 2: grep", "step 3: report"] },
    ...(running ? {} : { finishedAt: at, result: { ...result, ...fields } as unknown as TaskRecord["result"] }),
  } as TaskRecord
}

/** The stats computation before: a copy of the group per record (quadratic in a group's size). */
function summarizeBefore(records: TaskRecord[]) {
  const groups = new Map<string, TaskRecord[]>()
  for (const r of records.filter((r) => isFinished(r.status) && r.result))
    groups.set(r.role, [...(groups.get(r.role) ?? []), r])
  return summarize([...groups.values()].flat())
}

async function time(body: () => Promise<unknown>, times: number): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < times; i++) {
    const start = performance.now()
    await body()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  return samples[samples.length >> 1]!
}

interface Point {
  before: Record<string, number>
  after: Record<string, number>
}

async function measure(count: number, runs: number): Promise<Point> {
  const dir = await mkdtemp(`${tmpdir()}/oc-orch-bench-records-`)
  try {
    for (let i = 0; i < count; i += 500)
      await Promise.all(
        Array.from({ length: Math.min(500, count - i) }, (_, j) => {
          const made = record(i + j, count)
          return writeJson(`${dir}/${made.id}.json`, made, 0o600)
        }),
      )
    let start = performance.now()
    const store = new TaskStore(dir)
    await store.page({ limit: 1 })
    console.log(
      `  ${count} records: index built from the records (first start) in ${(performance.now() - start) / 1000} s`,
    )
    await Bun.sleep(1100) // a quiet directory, as between calls
    const key = `bench-${Math.floor(count / 3)}`
    // The path before runs once at 100,000 (stats alone took 42 s there).
    const slow = count >= 100_000 ? 1 : Math.max(1, Math.min(runs, 3))
    const before = {
      task_list: await time(async () => (await store.list()).slice(0, 20), slow),
      stats: await time(async () => summarizeBefore(await store.list()), slow),
      // The part-day path's before: the index rows of every finished task, summed (no record read).
      stats_since: await time(async () => summarize(await store.ledger(), Date.parse("2026-11-01T12:34:56Z")), runs),
      key: await time(async () => (await store.list()).find((r) => r.idempotencyKey === key), slow),
      open: await time(async () => (await new TaskStore(dir).list()).filter((r) => !isFinished(r.status)), slow),
    }
    start = performance.now()
    const after = {
      task_list: await time(() => store.page({ limit: 20 }), runs),
      stats: await time(() => store.stats(), runs),
      stats_since: await time(() => store.stats(Date.parse("2026-11-01T12:34:56Z")), runs),
      key: await time(() => store.findByKey(key), runs),
      open: await time(async () => {
        const fresh = new TaskStore(dir)
        await fresh.unfinished()
        fresh.views.index.close()
      }, runs),
    }
    store.views.index.close()
    return { before, after }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

export async function benchRecords(steps: number[], runs: number): Promise<void> {
  const points = new Map<number, Point>()
  for (const count of steps) points.set(count, await measure(count, runs))
  const first = points.get(steps[0]!)!
  const last = points.get(steps.at(-1)!)!
  const ms = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms`
  for (const call of ["task_list", "stats", "stats_since", "key", "open"] as const) {
    const cells = steps.map((count) => {
      const { before, after } = points.get(count)!
      const ratio = (before[call]! / after[call]!).toFixed(0)
      return `${count}: ${ms(after[call]!)} (before ${ms(before[call]!)}, ${ratio}x)`
    })
    const growth = last.after[call]! / first.after[call]!
    const verdict = growth <= FLAT_GOAL_RATIO ? "met" : "not met"
    console.log(`h) ${call.padEnd(9)} ${cells.join("; ")}`)
    console.log(`   ${steps.at(-1)} / ${steps[0]}: ${growth.toFixed(2)}x (goal ≤ ${FLAT_GOAL_RATIO}x: ${verdict})`)
  }
}
