// Writes src/mcp/tools-list.json: the tools/list answer our tools give, which `serve` answers with until
// its first tool call loads them (src/mcp/listed.ts). With --check (the build's first step) it only
// says whether the file is current; test/mcp/listed.test.ts holds the same, so a tool changed without
// running this fails there and here with this command.
//   bun scripts/tools-list.ts [--check]
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { JSONRPCMessage, ListToolsResult } from "@modelcontextprotocol/sdk/types.js"
import { leanListing } from "../src/mcp/define"
import { TOOLS } from "../src/mcp/toolset"
import { run } from "../src/util/process"

export const TOOLS_LIST = `${import.meta.dir}/../src/mcp/tools-list.json`

/**
 * What the McpServer lists for our tools, without the dialect line (as tasks.ts serves it), read off the wire
 * with its keys in the server's order (a client would parse them into its own); nothing runs.
 */
export async function liveToolsList(): Promise<ListToolsResult> {
  const server = new McpServer({ name: "tools-list", version: "1" })
  const never = () => Promise.reject(new Error("nothing is called while listing"))
  for (const tool of TOOLS) tool.register(server, never)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const answered = new Promise<ListToolsResult>((resolve) => {
    clientSide.onmessage = (message: JSONRPCMessage) => {
      if ("id" in message && message.id === 2 && "result" in message) resolve(message.result as ListToolsResult)
    }
  })
  await server.connect(serverSide)
  await clientSide.start()
  const clientInfo = { name: "tools-list", version: "1" }
  await clientSide.send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo },
  })
  await clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" })
  await clientSide.send({ jsonrpc: "2.0", id: 2, method: "tools/list" })
  try {
    return leanListing(await answered)
  } finally {
    await server.close()
  }
}

/** Whether the written list is the tools' own, byte for byte as the wire carries it (a garbled one is not). */
export async function toolsListCurrent(): Promise<boolean> {
  const written = await Bun.file(TOOLS_LIST)
    .json()
    .catch(() => undefined)
  // Key order included: a client's prompt cache keys on the tools' bytes, before and after they load.
  return JSON.stringify(written) === JSON.stringify(await liveToolsList())
}

if (import.meta.main) {
  if (process.argv.includes("--check")) {
    if (!(await toolsListCurrent())) {
      console.error("src/mcp/tools-list.json is not what the tools list.\nnext: run bun scripts/tools-list.ts")
      process.exit(1)
    }
  } else {
    await Bun.write(TOOLS_LIST, `${JSON.stringify(await liveToolsList(), null, 2)}\n`)
    // In the repository's own layout, so the check of the sources passes on it as written.
    await run(["bunx", "biome", "format", "--write", TOOLS_LIST], { cwd: `${import.meta.dir}/..` })
    console.log("wrote src/mcp/tools-list.json")
  }
}
