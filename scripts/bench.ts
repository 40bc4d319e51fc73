// Benchmarks, side by side in one run, reported as medians and ratios (not assertions):
//   a) binary start → `tools/list` answered
//   b) one warm scout delegation three ways on the same scripted task and the same warm OpenCode:
//      through our MCP server, through the bare SDK (create, prompt, delete), and `opencode run` as
//      a fresh process (what users of per-task tools wait for).
//   bun scripts/bench.ts [--runs N]
import { parseArgs } from "node:util"
import { rm } from "node:fs/promises"
import { connect } from "../src/opencode/client"
import { stopServer, ensureServer } from "../src/opencode/server"
import { createDemoRepository, DEMO_TASK } from "../src/model/demo"
import { createIsolatedHome } from "../src/model/home"
import { startScriptedModel } from "../src/model/server"
import { agentName } from "../src/engine/agents"
import { run } from "../src/util/process"
import { BINARY, connectStdio, TEST_PATH } from "../test/helpers/mcp"

const { values } = parseArgs({ options: { runs: { type: "string", default: "7" } } })
const runs = Number(values.runs)

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

async function timed(label: string, body: () => Promise<unknown>, times = runs) {
  await body() // warm-up, not counted
  const samples: number[] = []
  for (let i = 0; i < times; i++) {
    const start = performance.now()
    await body()
    samples.push(performance.now() - start)
  }
  const value = median(samples)
  console.log(`${label.padEnd(44)} median ${value.toFixed(0).padStart(6)} ms  (n=${times})`)
  return value
}

const model = await startScriptedModel()
const home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
const repo = await createDemoRepository()
try {
  console.log(`opencode-mcp-orchestrator bench: ${runs} runs each, median, scripted model on 127.0.0.1\n`)
  const startup = await timed("a) binary start → tools/list", async () => {
    const mcp = await connectStdio(home.env, [BINARY, "serve"])
    await mcp.client.listTools()
    await mcp.close()
  })

  const mcp = await connectStdio(home.env, [BINARY, "serve"])
  const viaMcp = await timed("b1) scout through the MCP server (warm)", async () => {
    const result = await mcp.client.callTool({ name: "scout", arguments: { cwd: repo, task: DEMO_TASK } })
    if ((result.structuredContent as { status: string }).status !== "succeeded") throw new Error("scout did not succeed")
  })
  await mcp.close()

  const record = await ensureServer({ paths: home.paths, binary: "opencode", env: home.env })
  const client = connect(record, repo)
  const viaSdk = await timed("b2) bare SDK: create, prompt, delete (warm)", async () => {
    const session = (await client.session.create({ directory: repo, title: "bench" })).data!
    await client.session.prompt({ sessionID: session.id, directory: repo, agent: agentName("scout"), parts: [{ type: "text", text: DEMO_TASK }] })
    await client.session.delete({ sessionID: session.id, directory: repo })
  })

  const fresh = await timed(
    "b3) opencode run, fresh process",
    async () => {
      const result = await run(["opencode", "run", "--agent", agentName("scout"), "-m", "scripted/fast", DEMO_TASK], { cwd: repo, env: home.env, timeoutMs: 120_000 })
      if (result.code !== 0) throw new Error(`opencode run failed: ${result.stderr.slice(-500)}`)
    },
    Math.min(runs, 5),
  )

  console.log("\nratios")
  console.log(`  MCP call / bare SDK         ${(viaMcp / viaSdk).toFixed(2)}x  (our layers cost ${(viaMcp - viaSdk).toFixed(0)} ms)`)
  console.log(`  opencode run / MCP call     ${(fresh / viaMcp).toFixed(2)}x`)
  console.log(`  startup                     ${startup.toFixed(0)} ms to tools/list`)
} finally {
  await stopServer(home.paths)
  await model.stop()
  await home.dispose()
  await rm(repo, { recursive: true, force: true })
}
