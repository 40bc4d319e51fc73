// The tools load with the first tool call, not at start: building their zod schemas and converting
// them to JSON Schema was most of what `serve` spent before its first `tools/list` answer. Until then
// `tools/list` is answered from tools-list.json, the list the tools give (test/mcp/listed.test.ts
// holds the two equal, and the build checks it; `bun scripts/tools-list.ts` writes it). The McpServer's own
// tool handlers are installed at start, through the wrappers tasks.ts puts in, so a call (a native
// task's included) reaches the tools by the same path it always did, once they are registered.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import {
  CallToolRequestSchema,
  type CallToolRequest,
  type ListToolsResult,
  ListToolsRequestSchema,
  type ServerResult,
} from "@modelcontextprotocol/sdk/types.js"
import type { OpenBackend } from "./define"
import type { Extra } from "./replies"
import listed from "./tools-list.json"

type Handler = (request: CallToolRequest, extra: Extra) => ServerResult | Promise<ServerResult>

/** The McpServer's internals this leans on (the pinned SDK's): its tool handlers, installed on demand. */
interface ToolHandlers {
  setToolRequestHandlers(): void
}

export function toolsOnFirstCall(server: McpServer, open: OpenBackend): void {
  const inner = server.server
  let loaded = false
  let loading: Promise<void> | undefined
  const load = () =>
    (loading ??= import("./toolset").then(({ TOOLS }) => {
      // Each registration tells a connected client the list changed; it has not (the same tools, listed.test.ts).
      server.sendToolListChanged = () => {}
      try {
        for (const tool of TOOLS) tool.register(server, open)
      } finally {
        delete (server as Partial<McpServer>).sendToolListChanged
      }
      loaded = true
    }))
  const previous = inner.setRequestHandler
  const set = previous.bind(inner)
  inner.setRequestHandler = (schema, handler) => {
    const method: unknown = schema
    if (method === ListToolsRequestSchema) {
      const list = handler as unknown as () => ServerResult | Promise<ServerResult>
      return set(ListToolsRequestSchema, async () => (loaded ? list() : (listed as unknown as ListToolsResult)))
    }
    if (method === CallToolRequestSchema) {
      const call = handler as unknown as Handler
      return set(CallToolRequestSchema, async (request, extra) => {
        await load()
        return call(request, extra)
      })
    }
    return set(schema, handler)
  }
  // Installed now, before the transport connects: the capability they declare cannot be added after.
  ;(server as unknown as ToolHandlers).setToolRequestHandlers()
  inner.setRequestHandler = previous
}
