// Which OpenCode instances a process should dispose of. The shared `opencode serve` keeps one instance
// per directory it has served (~26 MB, 3 threads, 3 fds each) until told otherwise, so every repository
// and worktree lane ever delegated to would stay in its memory. Decided here from what the process
// knows; the server is asked about running sessions (anyone's) only for the directories chosen.

export interface InstanceUse {
  directory: string
  /** When a delegation of this process last started, ran or ended a turn there. */
  lastUsedMs: number
  /** Turns of this process running there now. */
  holds: number
}

export interface InstanceLimits {
  /** A directory unused for this long is released. */
  idleMs: number
  /** At most this many directories kept live; the least recently used beyond it are released. */
  maxLive: number
}

/**
 * Directories to release, oldest use first: every unheld one idle for `idleMs`, then the least
 * recently used unheld ones while more than `maxLive` would stay. A held directory is never chosen,
 * and counts against the bound.
 */
export function instancesToRelease(uses: InstanceUse[], nowMs: number, limits: InstanceLimits): string[] {
  const oldest = [...uses].sort((a, b) => a.lastUsedMs - b.lastUsedMs)
  const chosen = new Set(
    oldest.filter((use) => use.holds === 0 && nowMs - use.lastUsedMs >= limits.idleMs).map((use) => use.directory),
  )
  let live = uses.length - chosen.size
  for (const use of oldest) {
    if (live <= limits.maxLive) break
    if (use.holds > 0 || chosen.has(use.directory)) continue
    chosen.add(use.directory)
    live--
  }
  return oldest.filter((use) => chosen.has(use.directory)).map((use) => use.directory)
}
