// This program's MCP server in-process on a runtime, reached through the SDK Client over an in-memory
// transport pair: the tools as a parent agent calls them, without a process in between.
import { Client, InMemoryTransport, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/client"
import { Delegations } from "../../src/engine/lifecycle"
import { type Env, type Flags, readFlags } from "../../src/config/flags"
import { Runtime } from "../../src/engine/capacity/runtime"
import * as engine from "../../src/engine"
import type { OpenBackend } from "../../src/mcp/define"
import { createServer } from "../../src/mcp/server"

/** The person behind a client that declares elicitation: answers each `elicitation/create`. */
export type Person = (request: ElicitRequest, extra: { signal: AbortSignal }) => ElicitResult | Promise<ElicitResult>

export interface InProcess {
  client: Client
  delegations: Delegations
  /** Settles the tasks still running, then closes the client and the server (not the runtime). */
  close(): Promise<void>
}

/** A backend on delegations the test built: the engine's surface, loaded already. */
export const backendOf =
  (delegations: Delegations): OpenBackend =>
  async () => ({ engine, delegations })

/** An engine for a test file, built as `serve`'s first call builds it (recovering what it finds), and its end. */
export interface EngineWorld {
  runtime: Runtime
  delegations: Delegations
  /** Settles the delegations, runs `closers` (the file's connections), then closes the runtime. */
  close(closers?: (() => Promise<unknown>)[]): Promise<void>
}

/** The engine on the isolated home `env`, with `flags` over what that environment says. */
export function engineWorld(env: Env, flags: Partial<Flags> = {}): EngineWorld {
  const runtime = new Runtime({ ...readFlags(env), ...flags })
  const delegations = new Delegations(runtime, { recover: true })
  return {
    runtime,
    delegations,
    close: async (closers = []) => {
      await delegations.shutdown()
      for (const close of closers) await close()
      runtime.close()
    },
  }
}

export async function serveInProcess(runtime: Runtime, clientName: string, person?: Person): Promise<InProcess> {
  const delegations = new Delegations(runtime, { recover: true })
  const server = createServer(backendOf(delegations))
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: clientName, version: "1" }, person ? { capabilities: { elicitation: {} } } : {})
  if (person)
    client.setRequestHandler("elicitation/create", (request, extra) => person(request, { signal: extra.mcpReq.signal }))
  await client.connect(clientSide)
  return {
    client,
    delegations,
    close: async () => {
      // Tasks still running in the background (a scout left `running`) settle before the server goes.
      await delegations.shutdown()
      await client.close()
      await server.close()
    },
  }
}
