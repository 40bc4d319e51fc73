// Writes src/mcp/tools-list.json: the tools/list answer our tools give, which `serve` answers with
// (src/mcp/server.ts) so that listing loads none of them. With --check (the build's first step) it only
// says whether the file is current; test/mcp/listed.test.ts holds the same, so a tool changed without
// running this fails there and here with this command.
//   bun scripts/tools-list.ts [--check]
import type { ListToolsResult } from "@modelcontextprotocol/server"
import { TOOLS } from "../src/mcp/toolset"
import { run } from "../src/util/process"

export const TOOLS_LIST = `${import.meta.dir}/../src/mcp/tools-list.json`

/** What our tools list, in toolset.ts's order; nothing runs. */
export function liveToolsList(): ListToolsResult {
  return { tools: TOOLS.map((tool) => tool.listing()) }
}

/** Whether the written list is the tools' own, byte for byte as the wire carries it (a garbled one is not). */
export async function toolsListCurrent(): Promise<boolean> {
  const written = await Bun.file(TOOLS_LIST)
    .json()
    .catch(() => undefined)
  // Key order included: a client's prompt cache keys on the tools' bytes, before and after they load.
  return JSON.stringify(written) === JSON.stringify(liveToolsList())
}

if (import.meta.main) {
  if (process.argv.includes("--check")) {
    if (!(await toolsListCurrent())) {
      console.error("src/mcp/tools-list.json is not what the tools list.\nnext: run bun scripts/tools-list.ts")
      process.exit(1)
    }
  } else {
    await Bun.write(TOOLS_LIST, `${JSON.stringify(liveToolsList(), null, 2)}\n`)
    // In the repository's own layout, so the check of the sources passes on it as written.
    await run(["bunx", "biome", "format", "--write", TOOLS_LIST], { cwd: `${import.meta.dir}/..` })
    console.log("wrote src/mcp/tools-list.json")
  }
}
