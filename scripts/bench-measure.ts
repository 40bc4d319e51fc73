// What the benchmarks measure with: medians over repeated runs after a warm-up, and a binary's start
// to `tools/list` answered (raw stdio, no SDK client) with its idle RSS.
import type { Env } from "../src/config/flags"
import { spawn } from "../src/util/process"

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Raw stdio, no SDK client: spawn `serve`, send initialize and tools/list, time the answer; then its RSS. */
async function startOnce(binary: string, env: Env): Promise<{ ms: number; rssMb: number }> {
  const started = performance.now()
  const proc = spawn([binary, "serve"], { env, stdin: "pipe" })
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
    const status = await Bun.file(`/proc/${proc.pid}/status`).text()
    return { ms, rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024 }
  } finally {
    proc.kill()
    await proc.exited
  }
}

/** Timers printing one median line each; `runs` samples unless told (a start is sampled at least 15 times). */
export function measure(runs: number) {
  async function startup(label: string, binary: string, env: Env) {
    await startOnce(binary, env) // warm-up (page cache), not counted
    const samples = []
    for (let i = 0; i < Math.max(runs, 15); i++) samples.push(await startOnce(binary, env))
    const ms = median(samples.map((s) => s.ms))
    const rssMb = median(samples.map((s) => s.rssMb))
    console.log(
      `${label.padEnd(44)} median ${ms.toFixed(0).padStart(6)} ms  idle RSS ${rssMb.toFixed(0)} MB  ` +
        `(n=${samples.length})`,
    )
    return { ms, rssMb }
  }

  async function timed(label: string, body: () => Promise<unknown>, times: number = runs) {
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
  return { startup, timed }
}
