// The tool surface as a client hands it to its model, and which registered tools a text leaves unnamed.
import { Client, InMemoryTransport, type Tool } from "@modelcontextprotocol/client"
import type { Flags } from "../../src/config/flags"
import { Delegations } from "../../src/engine/lifecycle"
import { Runtime } from "../../src/engine/capacity/runtime"
import { createServer } from "../../src/mcp/server"
import { backendOf } from "../helpers/in-process"

/** tools/list from an in-process server; nothing is delegated, so no OpenCode is started. */
export const listOurTools = (flags: Flags): Promise<Tool[]> =>
  withOurClient(flags, async (client) => (await client.listTools()).tools)

/** A client of an in-process server for the length of `use`; both are closed after. */
export async function withOurClient<T>(flags: Flags, use: (client: Client) => Promise<T>): Promise<T> {
  const runtime = new Runtime(flags)
  const server = createServer(backendOf(new Delegations(runtime)))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "surface-tests", version: "1" })
  await client.connect(clientSide)
  try {
    return await use(client)
  } finally {
    await client.close()
    await server.close()
    runtime.close()
  }
}

/** UTF-8 bytes of the tools array as Claude Code puts it in its Messages request: no output schema, names prefixed. */
export const clientToolBytes = (tools: Tool[], server: string) =>
  Buffer.byteLength(
    JSON.stringify(
      tools.map((tool) => ({
        name: `mcp__${server}__${tool.name}`,
        description: tool.description,
        input_schema: tool.inputSchema,
      })),
    ),
  )

/** Registered tools the text never names as `name` (in backticks, as a reader can search for it). */
export const unnamedTools = (text: string, tools: Tool[]) =>
  tools.map((tool) => tool.name).filter((name) => !text.includes(`\`${name}\``))

/**
 * UTF-8 bytes of what a model is handed of this server in all, as one JSON value: each tool's name,
 * description and input schema, and the server instructions.
 */
export const surfaceBytes = (tools: Tool[], instructions: string) =>
  Buffer.byteLength(
    JSON.stringify({
      tools: tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema })),
      instructions,
    }),
  )
