// The shared server's start lock, which a recycle's stop also takes. Two MCP processes may start at
// once (a client launching several): one starts the server, the other waits and reuses it. The lock
// file holds the owner's PID and start time; a lock whose owner is gone (SIGKILLed mid-start or
// mid-restart, or a PID reused by another process since) is taken over at once.
import { link, mkdir, rm, stat, writeFile } from "node:fs/promises"
import type { Paths } from "../config/paths"
import { fail } from "../errors"
import { alive, sameProcess, selfStart } from "../util/process"

/** True while the process the lock's text names still runs (`pid start`; an older lock, `pid` alone). */
export function lockHeld(text: string): boolean {
  const [pid, start] = text.trim().split(" ")
  const owner = Number(pid)
  return start ? sameProcess(owner, start) : alive(owner)
}

export async function withStartLock<T>(paths: Paths, body: () => Promise<T>): Promise<T> {
  await mkdir(paths.stateDir, { recursive: true, mode: 0o700 })
  const deadline = Date.now() + 60_000
  while (true) {
    try {
      // Written aside and linked into place, so nobody ever reads the lock without its owner's PID.
      const temp = `${paths.serverLock}.${process.pid}.${Date.now()}`
      await writeFile(temp, `${process.pid} ${selfStart() ?? ""}`.trim())
      try {
        await link(temp, paths.serverLock)
      } finally {
        await rm(temp, { force: true })
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      const owner = await Bun.file(paths.serverLock)
        .text()
        // A lock gone or unreadable names no holder.
        .catch(() => "0")
      // Gone between the failed create and this look: it counts as old, and the next attempt takes it.
      const age = Date.now() - ((await stat(paths.serverLock).catch(() => undefined))?.mtimeMs ?? 0)
      if (!lockHeld(owner) || age > 60_000) await rm(paths.serverLock, { force: true })
      else if (Date.now() > deadline)
        throw fail(
          "Server",
          "Timed out waiting for another process to start OpenCode.",
          `Remove ${paths.serverLock} if no other opencode-mcp-orchestrator is running.`,
        )
      else await Bun.sleep(100)
    }
  }
  try {
    return await body()
  } finally {
    await rm(paths.serverLock, { force: true })
  }
}
