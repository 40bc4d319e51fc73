// The world of the files that release the shared server's instances or restart it: a scout script
// that reads README.md, one whose answer comes late, and the MCP tools in process on the world's
// runtime. Both objects are filled in by a beforeAll registered here (a beforeAll the file adds after
// this call finds them ready) and stopped in an afterAll.
import { afterAll, beforeAll } from "bun:test"
import { front, startWorld, stopWorld, type Front, type World } from "../escape/_world"

const read = (filePath: string) => ({ tool: "read", args: { filePath } })

export function serverWorld(slowMs: number): { world: World; mcp: Front } {
  const world = {} as World
  const mcp = {} as Front
  beforeAll(async () => {
    Object.assign(
      world,
      await startWorld({
        read_readme: { turns: [{ steps: [read("README.md"), { text: "report: {{toolOutputs}}" }] }] },
        slow: { turns: [{ steps: [{ text: "late", delayMs: slowMs }] }] },
      }),
    )
    Object.assign(mcp, await front(world))
  }, 120_000)
  afterAll(async () => {
    // A start that failed left nothing to stop.
    if ("close" in mcp) await mcp.close()
    if ("runtime" in world) await stopWorld(world)
  })
  return { world, mcp }
}
