// "No orphan process": every process this program (or OpenCode, or a sandbox) starts for an isolated
// home inherits that home's HOME, so a process still carrying it after the last MCP process left is
// one that outlived its purpose. Read from /proc, so it sees detached and reparented processes too.
import { readdir, readFile, readlink } from "node:fs/promises"

/** PIDs (with their command lines) of live processes whose environment has HOME=`home`. */
export async function processesOf(home: string): Promise<{ pid: number; command: string }[]> {
  const found: { pid: number; command: string }[] = []
  const marker = `HOME=${home}\0`
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    const environ = await readFile(`/proc/${pid}/environ`, "latin1").catch(() => "")
    if (!`${environ}\0`.includes(marker)) continue
    const stat = await readFile(`/proc/${pid}/stat`, "latin1").catch(() => "")
    // A zombie has exited; only its parent's wait is missing.
    if (/^\d+ \(.*\) Z /s.test(stat)) continue
    const command = (await readFile(`/proc/${pid}/cmdline`, "latin1").catch(() => "")).replaceAll("\0", " ").trim()
    found.push({ pid, command })
  }
  return found
}

/** Waits up to `ms` for every process of `home` to be gone; returns those still there. */
export async function leftoversAfter(home: string, ms = 15_000): Promise<{ pid: number; command: string }[]> {
  const deadline = Date.now() + ms
  for (;;) {
    const left = await processesOf(home)
    if (left.length === 0 || Date.now() > deadline) return left
    await Bun.sleep(250)
  }
}

/**
 * Live processes whose command line holds `marker` and whose working directory lies under `dir`: for what a
 * sandbox runs, which carries neither the caller's HOME (bwrap's environment is empty, the command's is the
 * sandbox's own) nor its parent (`--unshare-pid`).
 */
export async function processesWorkingIn(dir: string, marker: string): Promise<{ pid: number; command: string }[]> {
  const found: { pid: number; command: string }[] = []
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    const command = (await readFile(`/proc/${pid}/cmdline`, "latin1").catch(() => "")).replaceAll("\0", " ").trim()
    if (!command.includes(marker)) continue
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => "")
    if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push({ pid, command })
  }
  return found
}

/** The detached watchdog (`supervise --parent <pid>`) the serve process started with its first task. */
export async function watchdogOf(pid: number): Promise<number | undefined> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const argv = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")
    if (argv.split("\0").join(" ").includes(`supervise --parent ${pid}`)) return Number(entry)
  }
  return undefined
}
