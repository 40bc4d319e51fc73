// One `worker` delegation followed as it runs, from the tool handler to the OpenCode session and back: every
// call into a function another file of src exports is one step of its route, and the async stack at that call
// is the route it took (test/engine/_route-measure.ts records them, in a process of its own; _route.ts counts).
// Over all of them: the files of src the delegation crosses, and its calls against the import direction (a
// callee the caller does not import: a callback handed down, a climb back up). Measured 2026-12-07 on a warm
// delegation: 68 files, 8–9 climbs, against a goal of 30 and 4. Counted this way every helper a call touches is
// a file crossed (the sandbox plan alone is 13 files, the policy, snapshot and store more), so the figure is
// larger than one read by following a parameter through the code; until the goal is met the route may not grow.
// Control: the counter on a planted route.
import { expect, test } from "bun:test"
import { tempDir } from "../helpers/temp"
import { run } from "../../src/util/process"
import { importGraph, measure, routeOf, SRC } from "./_route"

/**
 * Today's figures (68 files; 8 or 9 climbs from run to run, as events arrive), with room for one more of each
 * on a loaded machine (a read retried on a successor server): a change that lengthens the route fails here, one
 * that shortens it lowers them.
 */
const FILES_AT_MOST = 69
const CLIMBS_AT_MOST = 10

test("one warm worker delegation crosses no more files of src, and climbs back up no more often, than today", async () => {
  await using dir = await tempDir("oc-orch-route-")
  const out = `${dir.path}/route.json`
  const measured = await run(["bun", "test", "--timeout", "120000", `${import.meta.dir}/_route-measure.ts`], {
    cwd: `${import.meta.dir}/../..`,
    env: { ...process.env, ROUTE_OUT: out },
    timeoutMs: 180_000,
  })
  expect(measured.code, measured.stderr.slice(-3000)).toBe(0)
  const { calls, files, climbs } = (await Bun.file(out).json()) as { calls: number; files: string[]; climbs: string[] }
  console.log(`${calls} calls, ${files.length} files, ${climbs.length} climbs:\n  ${climbs.join("\n  ")}`)
  // The stacks are whole: the route reaches the handler and the OpenCode session.
  expect(files).toContain("mcp/tools/brief.ts")
  expect(files).toContain("opencode/session.ts")
  expect(files.length).toBeLessThanOrEqual(FILES_AT_MOST)
  expect(climbs.length).toBeLessThanOrEqual(CLIMBS_AT_MOST)
}, 240_000)

test("control: a planted route with one callback counts its files and names that one climb", () => {
  const sources = new Map([
    ["mcp/tool.ts", 'import { start } from "../engine/start"\n'],
    ["engine/start.ts", 'import { read } from "../util/read"\n'],
    ["util/read.ts", "export const read = (then: () => void) => then()\n"],
  ])
  const at = (file: string, line: number) => `    at fn (${SRC}/${file}:${line}:1)`
  // Innermost first, as a stack prints: the tool's callback, run by util/read.ts, climbs back to the tool.
  const stack = ["Error", at("mcp/tool.ts", 9), at("util/read.ts", 1), at("engine/start.ts", 2)]
  const outer = [`    at async run (${SRC}/mcp/tool.ts:3:1)`, "    at processTicksAndRejections (native:7:39)"]
  const route = routeOf([...stack, ...outer].join("\n"))
  expect(route).toEqual(["mcp/tool.ts", "engine/start.ts", "util/read.ts", "mcp/tool.ts"])
  expect(measure([route], importGraph(sources))).toEqual({
    files: ["engine/start.ts", "mcp/tool.ts", "util/read.ts"],
    climbs: ["util/read.ts → mcp/tool.ts"],
  })
  // The same route down only: no climb.
  expect(measure([route.slice(0, 3)], importGraph(sources)).climbs).toEqual([])
})
