// Benchmarks, side by side in one run, reported as medians and ratios (not assertions):
//   a) binary start → `tools/list` answered, and idle RSS: the shipped build (bytecode, minified)
//      beside a minimal MCP server built the same way and the watchdog (bench-footprint.ts), and beside a
//      plain `--compile` build of the same source, against the goals (50 ms, 60 MB, 1.3× the minimal)
//   b) one warm scout delegation three ways on the same scripted task and the same warm OpenCode:
//      through our MCP server, through the bare SDK (create, prompt, delete), and `opencode run` as
//      a fresh process (what users of per-task tools wait for).
//   c) worktree setup (an isolated worker's snapshot copy) on a repository of 5,000 files, beside a
//      plain `cp -a` of the same tree (the floor: creating the files), against the goal (300 ms)
//   d) 8 isolated workers at once through delegate_parallel vs 1, on a scripted model answering each
//      step after 500 ms (model time dominates, as for real): wall ratio against the goal (1.5×), on
//      worktree lanes OpenCode has not seen yet (cold) and on reused ones (warm)
//   e) `sessions` over 1,000 sessions: paged through OpenCode's list, the rows shown read (ours) beside
//      one capped call plus a message read per listed session (the path before), against 100 ms
//   f) serve's RSS, threads and fds after 1, 10 and 50 directories, kept, released, and released with
//      restarts (bench-growth.ts)
//   g) a retention pass over 10,000 records with parked sessions beside the path before (bench-retention.ts)
//   h) task_list, stats, a key lookup and a store's open at 1,000, 10,000 and 100,000 records, through the
//      index beside the path before (bench-records.ts)
//   i) hostile text: one long log line read and digested at 1 and 64 MB beside the way before, the secret
//      guard at 1 and 8 MB (bench-hostile.ts): the times the tests do not assert
//   j) OpenCode's CPU for one scout task on the shared server's config (its snapshots off) beside
//      OpenCode's default (snapshots on), in a new directory and a seen one (bench-opencode-cpu.ts)
//   k) the same for the scripted home's empty model catalog beside OpenCode's bundled one, and the CPU of a
//      server's first catalog read (bench-opencode-cpu.ts)
//   bun scripts/bench.ts [--runs N] [--only footprint|sessions|growth|retention|records|hostile|snapshot|catalog]
//     [--growth 1,10,50] [--records N] [--record-steps 1000,10000,100000]
import { parseArgs } from "node:util"
import { rm } from "node:fs/promises"
import { connect } from "../src/opencode/client"
import { takeLease } from "../src/opencode/lease"
import { stopServer, ensureServer } from "../src/opencode/server"
import { createDemoRepository, DEMO_TASK, createRepository } from "../src/model/demo"
import { createIsolatedHome } from "../src/model/home"
import { startScriptedModel } from "../src/model/server"
import { agentName } from "../src/agents/names"
import { connectStdio } from "../src/model/stdio-client"
import { run } from "../src/util/process"
import { readFlags } from "../src/config/flags"
import { hostContext } from "../src/sandbox"
import { createWorktree, removeWorktree } from "../src/workspace/worktree/worktree"
import { benchFootprint, startup } from "./bench-footprint"
import { benchGrowth } from "./bench-growth"
import { benchHostile } from "./bench-hostile"
import { measure } from "./bench-measure"
import { benchSessions } from "./bench-sessions"
import { benchRecords } from "./bench-records"
import { benchRetention } from "./bench-retention"
import { benchCatalog, benchSnapshot } from "./bench-opencode-cpu"

const ROOT = `${import.meta.dir}/..`
const BINARY = `${ROOT}/dist/opencode-mcp-orchestrator`
const PINNED_PATH = `${ROOT}/node_modules/.bin:/usr/local/bin:/usr/bin:/bin`
const STARTUP_GOAL_MS = 50
const WORKTREE_GOAL_MS = 300
const FANOUT_GOAL_RATIO = 1.5
const IDLE_RSS_GOAL_MB = 60

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    only: { type: "string" },
    growth: { type: "string", default: "1,10,50" },
    records: { type: "string", default: "10000" },
    "record-steps": { type: "string", default: "1000,10000,100000" },
  },
})
const runs = Number(values.runs)
const growthSteps = values.growth.split(",").map(Number)

const { timed } = measure(runs)

if (values.only === "retention") {
  await benchRetention(Number(values.records), PINNED_PATH)
  process.exit(0)
}

if (values.only === "hostile") {
  await benchHostile(timed, runs)
  process.exit(0)
}

if (values.only === "records") {
  await benchRecords(values["record-steps"].split(",").map(Number), runs)
  process.exit(0)
}

if (values.only === "sessions") {
  await benchSessions(timed, PINNED_PATH)
  process.exit(0)
}

if (values.only === "snapshot" || values.only === "catalog") {
  const cpuModel = await startScriptedModel()
  const bench = values.only === "snapshot" ? benchSnapshot : benchCatalog
  await bench(cpuModel.url, PINNED_PATH, runs).finally(() => cpuModel.stop())
  process.exit(0)
}

if (values.only === "footprint") {
  const idle = await createIsolatedHome({ modelUrl: "http://127.0.0.1:9/v1", env: { PATH: PINNED_PATH } })
  await benchFootprint(BINARY, idle.root, idle.env, Math.max(runs, 15)).finally(() => idle.dispose())
  process.exit(0)
}

if (values.only === "growth") {
  const growthModel = await startScriptedModel()
  await benchGrowth(growthModel.url, PINNED_PATH, growthSteps).finally(() => growthModel.stop())
  process.exit(0)
}

const model = await startScriptedModel()
const home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: PINNED_PATH } })
const repo = await createDemoRepository()
try {
  console.log(`opencode-mcp-orchestrator bench: ${runs} runs each, median, scripted model on 127.0.0.1\n`)
  // The slow path, built here from the same source: a plain compile without bytecode or minification.
  const plain = `${home.root}/plain-build`
  const built = await run(["bun", "build", "src/cli/main.ts", "--compile", "--outfile", plain], { cwd: ROOT })
  if (built.code !== 0) throw new Error(`plain build failed: ${built.stderr}`)
  const shipped = await benchFootprint(BINARY, home.root, home.env, Math.max(runs, 15))
  const slow = await startup("a2) start → tools/list, plain build", [plain, "serve"], home.env, Math.max(runs, 15))

  // This process holds a lease too, so the shared server outlives the MCP server for b2 and b3.
  await takeLease(home.paths)
  const mcp = await connectStdio([BINARY, "serve"], home.env, { clientName: "bench" })
  const viaMcp = await timed("b1) scout through the MCP server (warm)", async () => {
    const result = await mcp.client.callTool({ name: "scout", arguments: { cwd: repo, task: DEMO_TASK } })
    if ((result.structuredContent as { status: string }).status !== "succeeded")
      throw new Error("scout did not succeed")
  })
  await mcp.close()

  const record = await ensureServer({ paths: home.paths, binary: "opencode", env: home.env })
  const client = connect(record, { standIns: home.paths.opencodeDirsDir, directory: repo })
  const viaSdk = await timed("b2) bare SDK: create, prompt, delete (warm)", async () => {
    const created = await client.session.create({ directory: repo, title: "bench" })
    if (!created.data) throw new Error(`session.create: ${JSON.stringify(created.error)}`)
    const session = created.data
    await client.session.prompt({
      sessionID: session.id,
      directory: repo,
      agent: agentName("scout"),
      parts: [{ type: "text", text: DEMO_TASK }],
    })
    await client.session.delete({ sessionID: session.id, directory: repo })
  })

  const fresh = await timed(
    "b3) opencode run, fresh process",
    async () => {
      const result = await run(["opencode", "run", "--agent", agentName("scout"), "-m", "scripted/fast", DEMO_TASK], {
        cwd: repo,
        env: home.env,
        timeoutMs: 120_000,
      })
      if (result.code !== 0) throw new Error(`opencode run failed: ${result.stderr.slice(-500)}`)
    },
    Math.min(runs, 5),
  )

  // c) Worktree setup on 5,000 files, and the floor beside it.
  const files = Object.fromEntries(
    Array.from({ length: 5000 }, (_, i) => [`src/m${Math.floor(i / 100)}/f${i}.ts`, `export const v${i} = ${i}\n`]),
  )
  const big = await createRepository("oc-orch-bench-big-", files)
  const host = hostContext(readFlags(home.env))
  const setup = await timed("c1) worktree setup, 5,000 files", async () => {
    const { record } = await createWorktree(big, { host, paths: home.paths })
    await removeWorktree(home.paths, record)
  })
  const copy = await timed("c2) cp -a of the same tree (the floor)", async () => {
    await run(["cp", "-a", big, `${big}.copy`])
    await rm(`${big}.copy`, { recursive: true, force: true })
  })
  await rm(big, { recursive: true, force: true })

  // d) Fan-out: 8 isolated workers at once vs 1, each step answered after 500 ms.
  const slowModel = await startScriptedModel({
    scripts: {
      lane: {
        turns: [
          {
            steps: [
              { tool: "write", args: { filePath: "lane.txt", content: "lane\n" }, delayMs: 500 },
              { text: "lane done", delayMs: 500 },
            ],
          },
        ],
      },
    },
  })
  const fanHome = await createIsolatedHome({
    modelUrl: slowModel.url,
    env: { PATH: PINNED_PATH },
    config: { maxParallel: 8 },
  })
  const lanes = await Promise.all(
    Array.from({ length: 8 }, () => createRepository("oc-orch-bench-lane-", { "README.md": "# lane\n" })),
  )
  const fan = await connectStdio(
    [BINARY, "serve"],
    { ...fanHome.env, OPENCODE_MCP_ORCHESTRATOR_SYNC_BUDGET_MS: "300000" },
    { clientName: "bench" },
  )
  try {
    const group = async (count: number) => {
      const result = await fan.client.callTool(
        {
          name: "delegate_parallel",
          arguments: {
            briefs: lanes.slice(0, count).map((cwd) => ({ role: "worker", cwd, task: "[script:lane] write" })),
          },
        },
        { timeout: 600_000 },
      )
      const answer = result.structuredContent as { group_id: string; tasks: { status: string }[] }
      if (answer.tasks.some((task) => task.status !== "succeeded"))
        throw new Error(`a lane did not succeed: ${JSON.stringify(answer.tasks.map((t) => t.status))}`)
      for (const task of answer.tasks as { patch?: { patch_id: string } }[])
        if (task.patch)
          await fan.client.callTool({ name: "patch_discard", arguments: { patch_id: task.patch.patch_id } })
    }
    // The first group of 8 gets 7 lanes OpenCode has never seen (an instance bootstrap each); later
    // groups reuse them (workspace/worktree/lanes.ts), as a parent fanning out again does.
    const started = performance.now()
    await group(8)
    const cold = performance.now() - started
    console.log(`${"d0) 8 isolated workers, 7 new lanes (cold)".padEnd(44)} once   ${cold.toFixed(0).padStart(6)} ms`)
    const one = await timed("d1) 1 isolated worker", () => group(1), Math.min(runs, 3))
    const eight = await timed("d2) 8 isolated workers at once (warm lanes)", () => group(8), Math.min(runs, 3))
    console.log(
      `  fan-out: 8 at once / 1        ${(eight / one).toFixed(2)}x warm, ${(cold / one).toFixed(2)}x cold (goal ≤ ` +
        `${FANOUT_GOAL_RATIO}x: ${eight / one <= FANOUT_GOAL_RATIO ? "met" : "not met"})`,
    )
  } finally {
    await fan.close()
    await stopServer(fanHome.paths)
    await slowModel.stop()
    await fanHome.dispose()
    for (const lane of lanes) await rm(lane, { recursive: true, force: true })
  }

  await benchSessions(timed, PINNED_PATH)
  await benchGrowth(model.url, PINNED_PATH, growthSteps)
  await benchRetention(Number(values.records), PINNED_PATH)
  await benchHostile(timed, runs)
  await benchSnapshot(model.url, PINNED_PATH, runs)
  await benchCatalog(model.url, PINNED_PATH, runs)

  console.log("\nratios")
  console.log(
    `  worktree setup / cp -a      ${(setup / copy).toFixed(2)}x; setup ${setup.toFixed(0)} ms (goal ≤ ` +
      `${WORKTREE_GOAL_MS} ms: ${setup <= WORKTREE_GOAL_MS ? "met" : "not met"})`,
  )
  console.log(
    `  MCP call / bare SDK         ${(viaMcp / viaSdk).toFixed(2)}x  (our layers cost ` +
      `${(viaMcp - viaSdk).toFixed(0)} ms)`,
  )
  console.log(`  opencode run / MCP call     ${(fresh / viaMcp).toFixed(2)}x`)
  console.log(`  plain / shipped start       ${(slow.ms / shipped.ms).toFixed(2)}x`)
  console.log(
    `  startup                     ${shipped.ms.toFixed(0)} ms to tools/list (goal ≤ ${STARTUP_GOAL_MS} ms: ` +
      `${shipped.ms <= STARTUP_GOAL_MS ? "met" : "not met"})`,
  )
  console.log(
    `  idle RSS                    ${shipped.rssMb.toFixed(0)} MB (goal ≤ ${IDLE_RSS_GOAL_MB} MB: ` +
      `${shipped.rssMb <= IDLE_RSS_GOAL_MB ? "met" : "not met"})`,
  )
} finally {
  await stopServer(home.paths)
  await model.stop()
  await home.dispose()
  await rm(repo, { recursive: true, force: true })
}
