// `sessions` over more sessions than one page of OpenCode's list, on the real OpenCode: the total is
// true (1,010, where one call of the old limit said 500), the list is read in pages of 5,000 (one
// request here), never per session, and only the rows shown are read further. Each page after the first is asked from the
// previous page's oldest millisecond (sessions sharing it would otherwise fall between two pages; rare
// here, one tie in 1,010), so small pages re-read their boundary and must drop what they saw.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { listSessions } from "../../src/engine/sessions"
import { connect as connectOpencode } from "../../src/opencode/client"
import { listAllSessions } from "../../src/opencode/session"
import { connect, makeRepo, startWorld, stopWorld, structured, type Connected, type World } from "./_setup"

let world: World
let mcp: Connected
let repo: string
const COUNT = 1010
const created = new Set<string>()

beforeAll(async () => {
  world = await startWorld({})
  mcp = await connect(world)
  repo = await makeRepo(world)
  const { client } = await mcp.runtime.opencode()
  // Eight at a time: many share a millisecond, as sessions a fan-out starts do.
  for (let at = 0; at < COUNT; at += 8) {
    const ids = await Promise.all(
      Array.from({ length: Math.min(8, COUNT - at) }, (_, i) =>
        client.session.create({ directory: repo, title: `bulk ${at + i}` }),
      ),
    )
    for (const id of ids) created.add(id.data!.id)
  }
}, 180_000)
afterAll(async () => {
  await mcp?.close()
  await stopWorld(world)
})

/** The client, counting the calls made through it by path ("experimental.session.list"). */
function counting(client: OpencodeClient): { client: OpencodeClient; calls: Map<string, number> } {
  const calls = new Map<string, number>()
  const wrap = (target: object, path: string): object =>
    new Proxy(target, {
      get(object, key, receiver) {
        const value = Reflect.get(object, key, receiver)
        const at = path ? `${path}.${String(key)}` : String(key)
        if (typeof value === "function")
          return (...args: unknown[]) => {
            calls.set(at, (calls.get(at) ?? 0) + 1)
            return value.apply(object, args)
          }
        return value && typeof value === "object" ? wrap(value, at) : value
      },
    })
  return { client: wrap(client, "") as OpencodeClient, calls }
}

test("sessions reports the true total over 1,010 sessions, reading them in one request and only the rows shown", async () => {
  const { record } = await mcp.runtime.opencode()
  const standIns = mcp.runtime.paths.opencodeDirsDir
  const { client, calls } = counting(connectOpencode(record, { standIns }))
  const filter = { scope: "all", directory: repo, standIns, staleMs: 300_000, limit: 50 } as const
  const { rows, total } = await listSessions(client, [], filter)
  expect(total).toBe(COUNT)
  expect(rows.length).toBe(50)
  expect(new Set(rows.map((row) => row.session_id)).size).toBe(50)
  // 1,010 sessions in one page of 5,000 (each request costs OpenCode about its whole list), one read per row shown.
  expect(calls.get("experimental.session.list")).toBe(1)
  // Pages of 500 (the size before) read the same sessions in three requests or four (a tie at a boundary).
  const small = counting(connectOpencode(record, { standIns }))
  expect((await listAllSessions(small.client, 500)).filter((session) => created.has(session.id)).length).toBe(COUNT)
  expect(small.calls.get("experimental.session.list")).toBeGreaterThanOrEqual(3)
  expect(small.calls.get("experimental.session.list")).toBeLessThanOrEqual(4)
  expect(calls.get("session.messages")).toBe(50)
  // Control: one request with the old limit saw 500 of them.
  const { client: plain } = await mcp.runtime.opencode()
  expect((await plain.experimental.session.list({ limit: 500 })).data!.length).toBe(500)
  // Through the tool: the same total, the limit honoured, the rest announced.
  const tool = structured(await mcp.client.callTool({ name: "sessions", arguments: { directory: repo, limit: 200 } }))
  expect(tool.total).toBe(COUNT)
  expect((tool.sessions as unknown[]).length).toBe(200)
  // A state filter reads each candidate's state: all idle, none busy.
  expect(
    structured(
      await mcp.client.callTool({ name: "sessions", arguments: { directory: repo, state: "idle", limit: 10 } }),
    ).total,
  ).toBe(COUNT)
  expect(
    structured(await mcp.client.callTool({ name: "sessions", arguments: { directory: repo, state: "busy" } })).total,
  ).toBe(0)
}, 120_000)

test("pages of 7 over 1,010 sessions return each exactly once: the boundary re-read from its millisecond is deduplicated", async () => {
  const { client } = await mcp.runtime.opencode()
  const paged = await listAllSessions(client, 7)
  expect(paged.length).toBe(new Set(paged.map((session) => session.id)).size)
  expect(paged.filter((session) => created.has(session.id)).length).toBe(COUNT)
  // Newest update first, as OpenCode pages them.
  const updated = paged.map((session) => session.time.updated)
  expect(updated).toEqual([...updated].sort((a, b) => b - a))
}, 120_000)
