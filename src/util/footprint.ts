// What `opencode serve` holds, read from /proc for its process and every descendant (OpenCode's
// launcher may run the real binary as a child): resident memory, threads and open file descriptors. The
// shared server's recycling reads it (engine/capacity/recycle.ts), as do the benchmark and the tests.
import { readdir, readFile } from "node:fs/promises"

export interface Footprint {
  rssMb: number
  threads: number
  fds: number
}

// A process or thread can end between listing it and reading it: it then has no children and no
// footprint, which is what the reads below count it as.
async function children(pid: number): Promise<number[]> {
  // Gone: no threads.
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[])
  const out: number[] = []
  for (const task of tasks) {
    // Gone: no children.
    const text = await readFile(`/proc/${pid}/task/${task}/children`, "utf8").catch(() => "")
    for (const child of text.split(/\s+/).filter(Boolean)) out.push(Number(child))
  }
  return out
}

const field = (status: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0)

/** The footprint of `pid` and its descendants. */
export async function footprint(pid: number): Promise<Footprint> {
  const total: Footprint = { rssMb: 0, threads: 0, fds: 0 }
  const queue = [pid]
  while (queue.length) {
    const current = queue.shift() as number
    // Gone: nothing to count.
    const status = await readFile(`/proc/${current}/status`, "utf8").catch(() => "")
    if (!status) continue
    total.rssMb += field(status, "VmRSS") / 1024
    total.threads += field(status, "Threads")
    // Gone, or its fds not ours to read: none counted.
    total.fds += (await readdir(`/proc/${current}/fd`).catch(() => [] as string[])).length
    queue.push(...(await children(current)))
  }
  return { ...total, rssMb: Math.round(total.rssMb * 10) / 10 }
}

/** The smallest of three readings a second apart: RSS moves while the server's collector runs. */
export async function settledFootprint(pid: number): Promise<Footprint> {
  const readings: Footprint[] = []
  for (let i = 0; i < 3; i++) {
    await Bun.sleep(1000)
    readings.push(await footprint(pid))
  }
  return {
    rssMb: Math.min(...readings.map((r) => r.rssMb)),
    threads: Math.min(...readings.map((r) => r.threads)),
    fds: Math.min(...readings.map((r) => r.fds)),
  }
}
