// A 2026-07-28 client speaking raw JSON-RPC to `serve`'s server factory (serveStdio) over an in-memory pair:
// every request carries the envelope, and it opens with server/discover. The SDK's Client takes no
// `resultType: "task"` answer, so the tasks extension is spoken to this way; the extension's own schemas
// (@modelcontextprotocol/ext-tasks) judge the answers.
import { expect } from "bun:test"
import { InMemoryTransport, type JSONRPCMessage } from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import { CancelTaskResultV2Schema, GetTaskResultV2Schema } from "@modelcontextprotocol/ext-tasks/core/v2"
import type { Delegations } from "../../src/engine/lifecycle"
import { createServer } from "../../src/mcp/server"
import { backendOf } from "../helpers/in-process"

export const TASKS = "io.modelcontextprotocol/tasks"

export type Frame = { id?: number; result?: Record<string, unknown>; error?: { code: number; message: string } }
export type Modern = Awaited<ReturnType<typeof modernWire>>

export interface ModernOptions {
  /** Declares the tasks extension in every envelope. */
  extension: boolean
  /** Declares elicitation in form mode too. */
  forms?: boolean
}

/** The envelope of a 2026-07-28 request, declaring what `options` says. */
export const envelope = ({ extension, forms }: ModernOptions) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "orchestrator-tests", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {
    ...(extension ? { extensions: { [TASKS]: {} } } : {}),
    ...(forms ? { elicitation: { form: {} } } : {}),
  },
})

/** `serve`'s server factory on an in-memory pair over `delegations`; its client end, started. `closers` stop it. */
export async function servedWire(delegations: Delegations, closers: (() => Promise<unknown>)[]) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const handle = serveStdio(() => createServer(backendOf(delegations)), { transport: serverSide })
  closers.push(() => handle.close())
  return clientSide
}

export async function modernWire(
  delegations: Delegations,
  closers: (() => Promise<unknown>)[],
  options: ModernOptions,
) {
  const wire = await servedWire(delegations, closers)
  const waiting = new Map<number, (frame: Frame) => void>()
  wire.onmessage = (message) => {
    // As a line on the wire: what JSON cannot carry (an undefined field) is not there.
    const frame = JSON.parse(JSON.stringify(message)) as Frame
    if (typeof frame.id === "number") waiting.get(frame.id)?.(frame)
  }
  await wire.start()
  let next = 0
  /** The raw answer to one request. */
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Frame>((resolve) => {
      const id = ++next
      waiting.set(id, resolve)
      void wire.send({
        jsonrpc: "2.0",
        id,
        method,
        params: { ...params, _meta: envelope(options) },
      } as JSONRPCMessage)
    })
  /** The result; a JSON-RPC error throws its message. */
  const answer = async (method: string, params: Record<string, unknown> = {}) => {
    const frame = await send(method, params)
    if (frame.error) throw new Error(frame.error.message)
    return frame.result!
  }
  const discovered = await answer("server/discover")
  expect(discovered.supportedVersions).toContain("2026-07-28")
  expect(discovered.capabilities).toMatchObject({ extensions: { [TASKS]: {} } })
  return {
    send,
    answer,
    call: (name: string, args: Record<string, unknown>) => answer("tools/call", { name, arguments: args }),
    get: async (taskId: string) => GetTaskResultV2Schema.parse(await answer("tasks/get", { taskId })),
    cancel: async (taskId: string) => CancelTaskResultV2Schema.parse(await answer("tasks/cancel", { taskId })),
  }
}
