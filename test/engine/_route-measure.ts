// Run by route.test.ts in a `bun test` of its own (never by the suite's glob): one warm `worker` delegation on
// the real OpenCode with the scripted model, in-process so the stacks reach the MCP handler, with every
// exported function of src wrapped in place to record its caller's async stack. Wrapping modules in place
// lasts for the whole process, which is why this runs alone. Writes what _route.ts counts of it to the file
// named by ROUTE_OUT.
import { expect, mock, test } from "bun:test"
import { fileWorld } from "../mcp/_file-world"
import { connect, makeRepo, structured } from "../mcp/_setup"
import { importGraph, measure, readSources, routeOf, SRC } from "./_route"

const world = fileWorld({
  edit: {
    turns: [
      {
        steps: [
          { tool: "read", args: { filePath: "src/tally.ts" } },
          { tool: "write", args: { filePath: "src/extra.ts", content: "export const extra = 1\n" } },
          { text: "Added src/extra.ts." },
        ],
      },
    ],
  },
})

test("one warm worker delegation, traced", async () => {
  const graph = importGraph(await readSources())
  const stacks: string[] = []
  let tracing = false
  Error.stackTraceLimit = 200
  // The cli's entry points run as they load; a delegation passes none of them. Classes are left as they are.
  for (const file of [...graph.keys()].filter((file) => !file.startsWith("cli/"))) {
    const exports = (await import(`${SRC}/${file}`)) as Record<string, unknown>
    const wrapped: Record<string, unknown> = {}
    for (const [name, value] of Object.entries(exports)) {
      if (typeof value !== "function" || /^[A-Z]/.test(name)) continue
      const fn = value as (...args: unknown[]) => unknown
      wrapped[name] = function (this: unknown, ...args: unknown[]) {
        if (tracing) stacks.push(new Error().stack ?? "")
        return fn.apply(this, args)
      }
    }
    if (Object.keys(wrapped).length > 0) mock.module(`${SRC}/${file}`, () => ({ ...exports, ...wrapped }))
  }
  const { client, close } = await connect(world)
  // A first delegation starts what every later one finds running (the OpenCode server, its instance).
  const task = "Add it. [script:edit]"
  const warm = await client.callTool({ name: "worker", arguments: { cwd: await makeRepo(world), task } })
  expect(structured(warm).status).toBe("succeeded")
  const repo = await makeRepo(world)
  tracing = true
  const result = await client.callTool({ name: "worker", arguments: { cwd: repo, task } })
  tracing = false
  expect(structured(result).status).toBe("succeeded")
  await close()
  // The scripted model runs in this process too: it is the test's, not the delegation's.
  const routes = stacks.map((stack) => routeOf(stack, ["model"])).filter((route) => route.length > 0)
  await Bun.write(process.env.ROUTE_OUT!, JSON.stringify({ calls: routes.length, ...measure(routes, graph) }))
}, 120_000)
