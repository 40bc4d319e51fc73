// How many sessions the shared OpenCode server runs at once, sampled every 50 ms. `session.status`
// answers for one directory instance, so a sweep over several asks them at different moments: a
// session that ended before one answer and one that started before the next would both look busy.
// A session counts only when two consecutive sweeps both saw it busy; then it was busy for the whole
// time between them, and any two sessions so counted in the same pair of sweeps really overlapped.
import type { Paths } from "../../src/config/paths"
import { connect } from "../../src/opencode/client"
import { readServerRecord } from "../../src/opencode/server"

/** One sweep: the busy session ids of each directory. */
export type Sweep = Map<string, Set<string>>

/** The sessions busy in both sweeps: the most in any one directory, and in all of them together. */
export function overlapping(previous: Sweep, current: Sweep): { perWorkspace: number; total: number } {
  const counts = [...current].map(([directory, ids]) => {
    const before = previous.get(directory)
    return [...ids].filter((id) => before?.has(id)).length
  })
  return { perWorkspace: Math.max(0, ...counts), total: counts.reduce((sum, count) => sum + count, 0) }
}

async function sweep(paths: Paths, directories: string[]): Promise<Sweep> {
  const server = await readServerRecord(paths)
  const seen: Sweep = new Map()
  if (!server) return seen
  const client = connect(server, { standIns: paths.opencodeDirsDir })
  await Promise.all(
    directories.map(async (directory) => {
      const status = await client.session.status({ directory }).catch(() => undefined)
      const states = Object.entries((status?.data ?? {}) as Record<string, { type: string }>)
      seen.set(directory, new Set(states.filter(([, state]) => state.type !== "idle").map(([id]) => id)))
    }),
  )
  return seen
}

/** Samples the busy sessions of `directories()` until stopped: the most at once in one, and in all. */
export function busySampler(paths: Paths, directories: () => Promise<string[]>) {
  let perWorkspace = 0
  let total = 0
  let running = true
  const done = (async () => {
    let previous: Sweep = new Map()
    while (running) {
      const current = await sweep(paths, [...new Set(await directories())])
      const both = overlapping(previous, current)
      perWorkspace = Math.max(perWorkspace, both.perWorkspace)
      total = Math.max(total, both.total)
      previous = current
      await Bun.sleep(50)
    }
  })()
  return {
    total: () => total,
    stop: async () => {
      running = false
      await done
      return { perWorkspace, total }
    },
  }
}
