// e) of the benchmarks: 1,000 sessions on a fresh server, listed the way `sessions` does and the way it did.
import { rm } from "node:fs/promises"
import { listSessions } from "../src/engine/sessions"
import { DEFAULT_SESSION_ROWS } from "../src/engine/terms"
import { createRepository } from "../src/model/demo"
import { createIsolatedHome } from "../src/model/home"
import { connect } from "../src/opencode/client"
import { listAllSessions } from "../src/opencode/session"
import { ensureServer, stopServer } from "../src/opencode/server"

const SESSIONS_GOAL_MS = 100

type Timed = (label: string, body: () => Promise<unknown>) => Promise<number>

/**
 * e) 1,000 sessions on a fresh server, listed the way `sessions` does (its default rows shown, and 50) and the
 * way it did (50 rows).
 */
export async function benchSessions(timed: Timed, pinnedPath: string) {
  const sessionsHome = await createIsolatedHome({ modelUrl: "http://127.0.0.1:9/v1", env: { PATH: pinnedPath } })
  const dir = await createRepository("oc-orch-bench-sessions-", { "README.md": "# sessions\n" })
  try {
    const server = await ensureServer({ paths: sessionsHome.paths, binary: "opencode", env: sessionsHome.env })
    const client = connect(server, { standIns: sessionsHome.paths.opencodeDirsDir })
    for (let at = 0; at < 1000; at += 10)
      await Promise.all(
        Array.from({ length: 10 }, (_, i) => client.session.create({ directory: dir, title: `bench ${at + i}` })),
      )
    const filter = { scope: "all" as const, staleMs: 300_000, limit: DEFAULT_SESSION_ROWS }
    const fifty = { ...filter, limit: 50 }
    // The server settles after 1,000 creations first: measured at once, the first path paid for it.
    await Bun.sleep(3000)
    await listSessions(client, [], filter)
    let total = 0
    const paged = await timed(`e1) sessions, 1,000: paged, the default ${DEFAULT_SESSION_ROWS} rows read`, async () => {
      total = (await listSessions(client, [], filter)).total
    })
    const paged50 = await timed("e1b) the same with limit 50", () => listSessions(client, [], fifty))
    let before = 0
    const perSession = await timed("e2) one call (limit 500) + a read per session", async () => {
      const listed = (await client.experimental.session.list({ limit: 500 })).data ?? []
      const latest = await Promise.all(
        listed.map((session) => client.session.messages({ sessionID: session.id, limit: 1 })),
      )
      await Promise.all(
        listed.slice(0, fifty.limit).map((session) => client.session.messages({ sessionID: session.id, limit: 6 })),
      )
      before = latest.length
    })
    // Where the time goes: the list alone (pages of 500, or one request for all), and the rows' reads alone.
    const listOnly = await timed("e3) the list alone, pages of 500 (before)", () => listAllSessions(client, 500))
    const oneRequest = await timed("e4) the list alone, as now (pages of 5,000)", () => listAllSessions(client))
    const shown = (await listAllSessions(client)).slice(0, fifty.limit)
    const reads = await timed("e5) the 50 shown rows' message reads alone (limit 6)", () =>
      Promise.all(shown.map((session) => client.session.messages({ sessionID: session.id, limit: 6 }))),
    )
    const reads1 = await timed("e6) the same 50 reads, limit 1", () =>
      Promise.all(shown.map((session) => client.session.messages({ sessionID: session.id, limit: 1 }))),
    )
    const one = await timed("e7) one of those reads alone", () =>
      client.session.messages({ sessionID: shown[0]!.id, limit: 6 }),
    )
    console.log(`  sessions: 50 reads of limit 1 ${reads1.toFixed(0)} ms; one read ${one.toFixed(1)} ms`)
    console.log(
      `  sessions: list ${oneRequest.toFixed(0)} ms (pages of 500: ${listOnly.toFixed(0)} ms), ` +
        `50 reads ${reads.toFixed(0)} ms`,
    )
    console.log(
      `  sessions: paged / per-session ${(paged50 / perSession).toFixed(2)}x at 50 rows; total ${total} ` +
        `(before: ${before}); ${paged.toFixed(0)} ms at ${DEFAULT_SESSION_ROWS} rows ` +
        `(goal ≤ ${SESSIONS_GOAL_MS} ms: ${paged <= SESSIONS_GOAL_MS ? "met" : "not met"}), ` +
        `${paged50.toFixed(0)} ms at 50`,
    )
  } finally {
    await stopServer(sessionsHome.paths)
    await sessionsHome.dispose()
    await rm(dir, { recursive: true, force: true })
  }
}
