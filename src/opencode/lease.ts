// The shared OpenCode server outlives any one MCP server process, so a client restart can re-attach
// to running work. It should not outlive all of them: each `serve` process holds a lease (a file
// named by its PID), and the last one to leave stops the server unless work it started still runs.
import { mkdirSync, writeFileSync } from "node:fs"
import { mkdir, readdir, rm, writeFile } from "node:fs/promises"
import type { Paths } from "../config/paths"
import { alive } from "../util/process"

export async function takeLease(paths: Paths): Promise<void> {
  await mkdir(paths.leasesDir, { recursive: true, mode: 0o700 })
  await writeFile(`${paths.leasesDir}/${process.pid}`, new Date().toISOString())
}

/**
 * The same, at once: `serve` takes it on its first tool call, before anything there can reach OpenCode,
 * and takes one for its watchdog's PID as it starts it.
 */
export function takeLeaseNow(paths: Paths, pid = process.pid): void {
  mkdirSync(paths.leasesDir, { recursive: true, mode: 0o700 })
  writeFileSync(`${paths.leasesDir}/${pid}`, new Date().toISOString())
}

/** PIDs of other live `serve` processes; leases of dead ones are removed on the way. */
async function otherLeases(paths: Paths): Promise<number[]> {
  const names = await readdir(paths.leasesDir).catch(() => [] as string[])
  const pids: number[] = []
  for (const name of names) {
    const pid = Number(name)
    if (pid === process.pid) continue
    if (alive(pid)) pids.push(pid)
    else await rm(`${paths.leasesDir}/${name}`, { force: true })
  }
  return pids
}

/** Drops this process's lease; stops the shared server when nobody else holds one and nothing runs. */
export async function releaseLease(paths: Paths, workStillRunning: boolean): Promise<"stopped" | "kept"> {
  await rm(`${paths.leasesDir}/${process.pid}`, { force: true })
  if (workStillRunning || (await otherLeases(paths)).length > 0) return "kept"
  // Loaded only here: the watchdog, waiting with its lease, stays free of the server module and zod.
  const { stopServer } = await import("./server")
  await stopServer(paths)
  return "stopped"
}
