// Writes dist/tools-list.json: the tools/list answer our tools give, which `serve` answers with
// (src/mcp/server.ts) so that listing loads none of them. The build writes it first (scripts/build.ts), like
// the plugin it embeds, so it is never written by hand and never out of step with the tools;
// test/mcp/listed.test.ts holds it equal to them, key order included.
//   bun scripts/tools-list.ts
import type { ListToolsResult } from "@modelcontextprotocol/server"
import { TOOLS } from "../src/mcp/toolset"

export const TOOLS_LIST = `${import.meta.dir}/../dist/tools-list.json`

/** What our tools list, in toolset.ts's order; nothing runs. */
export function liveToolsList(): ListToolsResult {
  return { tools: TOOLS.map((tool) => tool.listing()) }
}

/**
 * Whether the written list (the build's, or the file named) is the tools' own, byte for byte as the wire carries
 * it (a garbled one is not).
 */
export async function toolsListCurrent(file = TOOLS_LIST): Promise<boolean> {
  const written = await Bun.file(file)
    .json()
    .catch(() => undefined)
  // Key order included: a client's prompt cache keys on the tools' bytes, before and after they load.
  return JSON.stringify(written) === JSON.stringify(liveToolsList())
}

if (import.meta.main) {
  await Bun.write(TOOLS_LIST, `${JSON.stringify(liveToolsList(), null, 2)}\n`)
  console.log("wrote dist/tools-list.json")
}
