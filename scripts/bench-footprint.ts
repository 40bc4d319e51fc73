// a) The idle footprint, side by side in one run: a minimal MCP server (minimal-mcp.ts: the SDK and one
// zod tool) compiled here the way the shipped binary is (bytecode, minified), our binary's start →
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

/** Both servers started in turn, so a machine whose load changes during the run weighs on both alike. */
async function sideBySide(minimal: string[], ours: string[], env: Env, runs: number): Promise<[Start, Start]> {
  await startOnce(minimal, env) // warm-up (page cache), not counted
  await startOnce(ours, env)
  const samples: [Start[], Start[]] = [[], []]
  for (let i = 0; i < runs; i++) {
    samples[0].push(await startOnce(minimal, env))
    samples[1].push(await startOnce(ours, env))
  }
  const [base, mine] = samples.map((taken) => ({
    ms: median(taken.map((s) => s.ms)),
    rssMb: median(taken.map((s) => s.rssMb)),
  })) as [Start, Start]
  const line = (label: string, start: Start) =>
    `${label.padEnd(44)} median ${start.ms.toFixed(0).padStart(6)} ms  ` +
    `idle RSS ${start.rssMb.toFixed(0)} MB  (n=${runs})`
  console.log(line("a0) start → tools/list, minimal MCP server", base))
  console.log(line("a1) start → tools/list, shipped build", mine))
  return [base, mine]
}

/** Builds the minimal server into `dir`, then measures it, `binary serve` and `binary supervise`. */
export async function benchFootprint(binary: string, dir: string, env: Env, runs: number): Promise<Start> {
  const minimal = `${dir}/minimal-mcp`
  const argv = [
    ...["bun", "build", "scripts/minimal-mcp.ts", "--compile", "--bytecode", "--format=esm", "--minify"],
    ...["--outfile", minimal],
  ]
  const built = await run(argv, { cwd: `${import.meta.dir}/..` })
  if (built.code !== 0) throw new Error(`minimal build failed: ${built.stderr}`)
  const [base, ours] = await sideBySide([minimal], [binary, "serve"], env, runs)
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
  return ours
}
