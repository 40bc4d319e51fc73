// a) The idle footprint, side by side in one run: a minimal MCP server (minimal-mcp.ts: the SDK and one
// zod tool) compiled here the way the shipped binary is (bytecode, minified), the same on SDK v1
// (minimal-mcp-v1.ts), our binary's start →
// `tools/list` and idle RSS, and the watchdog's RSS (the waiting loop `serve` starts with its first task,
// beside `supervise` itself waiting, as it was before), each as a ratio to the minimal server.
import { median } from "./bench-measure"
import { run, spawn } from "../src/util/process"
import { watchdogCommand } from "../src/cli/watchdog"
import type { Env } from "../src/config/flags"

/** The goal: start and idle RSS at most this many times the minimal server's. */
const FOOTPRINT_GOAL_RATIO = 1.3

export interface Start {
  ms: number
  rssMb: number
}

async function rssMb(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text()
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

/** Raw stdio, no SDK client: spawn the server, send initialize and tools/list, time the answer; then its RSS. */
export async function startOnce(argv: string[], env: Env): Promise<Start> {
  const started = performance.now()
  const proc = spawn(argv, { env, stdin: "pipe" })
  try {
    const frames = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
    ]
    proc.stdin!.write(frames.map((frame) => `${JSON.stringify(frame)}\n`).join(""))
    await proc.stdin!.flush()
    const decoder = new TextDecoder()
    let output = ""
    for await (const chunk of proc.stdout!) {
      output += decoder.decode(chunk)
      if (output.includes('"id":2')) break
    }
    const ms = performance.now() - started
    // Idle: whatever the server starts in the background after answering has had a moment to run.
    await Bun.sleep(300)
    return { ms, rssMb: await rssMb(proc.pid) }
  } finally {
    proc.kill()
    await proc.exited
  }
}

export async function startup(label: string, argv: string[], env: Env, runs: number): Promise<Start> {
  await startOnce(argv, env) // warm-up (page cache), not counted
  const samples: Start[] = []
  for (let i = 0; i < runs; i++) samples.push(await startOnce(argv, env))
  const ms = median(samples.map((s) => s.ms))
  const rss = median(samples.map((s) => s.rssMb))
  console.log(
    `${label.padEnd(44)} median ${ms.toFixed(0).padStart(6)} ms  idle RSS ${rss.toFixed(0)} MB  (n=${samples.length})`,
  )
  return { ms, rssMb: rss }
}

/** A watchdog waiting on a parent that lives (this process): its settled RSS, the shell's or supervise's. */
async function watchdogOnce(argv: string[], env: Env): Promise<number> {
  const proc = spawn(argv, { env })
  try {
    await Bun.sleep(1500)
    return await rssMb(proc.pid)
  } finally {
    proc.kill()
    await proc.exited
  }
}

async function watchdog(label: string, argv: string[], env: Env, runs: number): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < runs; i++) samples.push(await watchdogOnce(argv, env))
  const rss = median(samples)
  console.log(`${label.padEnd(44)} ${rss.toFixed(1).padStart(6)} MB  (n=${samples.length})`)
  return rss
}

/** The servers started in turn, so a machine whose load changes during the run weighs on all alike. */
async function sideBySide(servers: Array<{ label: string; argv: string[] }>, env: Env, runs: number): Promise<Start[]> {
  for (const { argv } of servers) await startOnce(argv, env) // warm-up (page cache), not counted
  const samples: Start[][] = servers.map(() => [])
  for (let i = 0; i < runs; i++)
    for (const [at, { argv }] of servers.entries()) samples[at]!.push(await startOnce(argv, env))
  return servers.map(({ label }, at) => {
    const taken = samples[at]!
    const start = { ms: median(taken.map((s) => s.ms)), rssMb: median(taken.map((s) => s.rssMb)) }
    console.log(
      `${label.padEnd(44)} median ${start.ms.toFixed(0).padStart(6)} ms  ` +
        `idle RSS ${start.rssMb.toFixed(0)} MB  (n=${runs})`,
    )
    return start
  })
}

/** `source` compiled into `outfile` the way the shipped binary is. */
async function compileMinimal(source: string, outfile: string): Promise<void> {
  const argv = [
    ...["bun", "build", source, "--compile", "--bytecode", "--format=esm", "--minify"],
    ...["--outfile", outfile],
  ]
  const built = await run(argv, { cwd: `${import.meta.dir}/..` })
  if (built.code !== 0) throw new Error(`${source} build failed: ${built.stderr}`)
}

/** Builds the minimal server into `dir`, then measures it, `binary serve` and `binary supervise`. */
export async function benchFootprint(binary: string, dir: string, env: Env, runs: number): Promise<Start> {
  const minimal = `${dir}/minimal-mcp`
  const minimalV1 = `${dir}/minimal-mcp-v1`
  await compileMinimal("scripts/minimal-mcp.ts", minimal)
  await compileMinimal("scripts/minimal-mcp-v1.ts", minimalV1)
  const [v1, base, ours] = (await sideBySide(
    [
      { label: "a0) start → tools/list, minimal server, SDK v1", argv: [minimalV1] },
      { label: "a0) start → tools/list, minimal server, SDK v2", argv: [minimal] },
      { label: "a1) start → tools/list, shipped build (SDK v2)", argv: [binary, "serve"] },
    ],
    env,
    runs,
  )) as [Start, Start, Start]
  const dogRuns = Math.min(runs, 5)
  const dog = await watchdog(
    "a3) watchdog as serve starts it, waiting",
    watchdogCommand([binary], process.pid),
    env,
    dogRuns,
  )
  const before = ["supervise", "--parent", String(process.pid)]
  const supervise = await watchdog(
    "a4) `supervise` itself waiting (the watchdog before)",
    [binary, ...before],
    env,
    dogRuns,
  )
  const verdict = (ratio: number) =>
    `goal ≤ ${FOOTPRINT_GOAL_RATIO}×: ${ratio <= FOOTPRINT_GOAL_RATIO ? "met" : "not met"}`
  const ratio = (ours.ms / base.ms).toFixed(2)
  console.log(`  start / minimal             ${ratio}x (${verdict(ours.ms / base.ms)})`)
  console.log(
    `  idle RSS / minimal          ${(ours.rssMb / base.rssMb).toFixed(2)}x (${verdict(ours.rssMb / base.rssMb)})`,
  )
  console.log(
    `  watchdog RSS / minimal      ${(dog / base.rssMb).toFixed(2)}x ` +
      `(supervise: ${(supervise / base.rssMb).toFixed(2)}x)`,
  )
  const both = (label: string, to: Start, from: Start) =>
    console.log(
      `  ${label.padEnd(27)} start ${(to.ms / from.ms).toFixed(2)}x, idle RSS ${(to.rssMb / from.rssMb).toFixed(2)}x`,
    )
  both("SDK v2 / v1, minimal", base, v1)
  both("shipped / minimal v1", ours, v1)
  return ours
}
