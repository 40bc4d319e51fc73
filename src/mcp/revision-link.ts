// One stdio connection's revision: a client that opens with `server/discover` declaring the tasks
// extension speaks 2026-07-28 for the rest of the connection, and this link translates every frame
// between it and the SDK server (initialized behind it at 2025-11-25); any other client passes through
// untouched. The task logic stays in tasks.ts: a call that outlasts the sync budget is turned into the
// extension's task, and the client's tasks/get is answered from the SDK's tasks/get and, once the task
// has ended, tasks/result.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import {
  completedTask,
  completeResult,
  declaresTasks,
  discoverResult,
  extensionTask,
  hasResult,
  INITIALIZED,
  initializeFor,
  isDiscover,
  isId,
  isObject,
  mayBecomeTask,
  taskOfRunning,
  withoutEnvelope,
  type Id,
  type Json,
} from "./revision-2026"

/** Ids of the link's own requests to the SDK server; a client's ids are numbers or its own strings. */
const OWN_ID = "revision-2026-link:"

interface Pending {
  method: string
  /** A tools/call whose `running` answer becomes a task. */
  asTask?: boolean
}

type Own = { kind: "initialize"; discover: Id } | { kind: "result"; client: Id; task: Json }

export interface LinkEnds {
  /** Into the SDK server (the transport's onmessage). */
  toServer(message: JSONRPCMessage): void
  /** Onto the wire, to the client. */
  toClient(message: JSONRPCMessage): void
}

export class RevisionLink {
  /** Set by the first `server/discover`; a client that initialized first is never modern. */
  private modern = false
  private legacy = false
  private discovered: Json | undefined
  private waitingDiscovers: Id[] = []
  private pending = new Map<Id, Pending>()
  private own = new Map<string, Own>()
  private next = 0

  constructor(private ends: LinkEnds) {}

  /** True once the client discovered: the gate's "initialize first" does not apply to it. */
  get initialized(): boolean {
    return this.modern
  }

  /**
   * A line from the client: handled here (undefined), or the line to hand on to the gate. Lines that are
   * not JSON, or come from a client that initialized, are handed on as they are.
   */
  inbound(line: string): string | undefined {
    if (this.legacy) return line
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      // Not JSON: the gate answers it with a parse error.
      return line
    }
    if (!isObject(message)) return line
    if (!this.modern && message.method === "initialize") this.legacy = true
    // Only a client declaring the tasks extension is answered: 2026-07-28 has the server ask the person
    // through input_required results, not the elicitation requests questions are relayed with today, so a
    // client without the extension is better served by 2025-11-25, which it falls back to when the gate
    // refuses its discover as it always has.
    if (isDiscover(message) && (this.modern || (!this.legacy && declaresTasks(message)))) return this.discover(message)
    if (!this.modern) return line
    const method = typeof message.method === "string" ? message.method : undefined
    if (method !== undefined && typeof message.id === "string" && message.id.startsWith(OWN_ID)) {
      // Its answer would be taken for the link's own: refused, never misrouted.
      const error = { code: -32600, message: `Invalid request: ids starting "${OWN_ID}" are reserved; use another id.` }
      this.ends.toClient({ jsonrpc: "2.0", id: message.id, error } as JSONRPCMessage)
      return undefined
    }
    if (method !== undefined && isId(message.id))
      this.pending.set(message.id, { method, asTask: method === "tools/call" && mayBecomeTask(message) })
    return JSON.stringify(withoutEnvelope(message))
  }

  /** A frame from the SDK server: the frame to put on the wire, or undefined when the link consumed it. */
  outbound(message: JSONRPCMessage): JSONRPCMessage | undefined {
    const frame = message as Json
    if (typeof frame.id === "string" && this.own.has(frame.id)) return this.ownAnswer(frame.id, frame)
    if (!this.modern || "method" in frame || !isId(frame.id)) return message
    const pending = this.pending.get(frame.id)
    this.pending.delete(frame.id)
    if (!pending || !isObject(frame.result)) return message
    const result = frame.result
    if (pending.method === "tools/call" && pending.asTask) {
      const task = taskOfRunning(result)
      if (task) return { ...message, result: task } as JSONRPCMessage
    }
    if (pending.method === "tasks/get" && hasResult(result)) {
      // The tool's result rides on tasks/get in this revision: read it (at once, the task has ended) first.
      const taskId = result.taskId
      this.ask({ kind: "result", client: frame.id, task: result }, "tasks/result", { taskId })
      return undefined
    }
    if (pending.method === "tasks/get" || pending.method === "tasks/cancel")
      return { ...message, result: extensionTask(result) } as JSONRPCMessage
    return { ...message, result: completeResult(pending.method, result) } as JSONRPCMessage
  }

  private discover(message: Json & { id: Id }): undefined {
    if (this.discovered) {
      // A second discover on the connection (the client re-probing) gets the same answer.
      this.ends.toClient({ jsonrpc: "2.0", id: message.id, result: this.discovered } as JSONRPCMessage)
      return undefined
    }
    this.waitingDiscovers.push(message.id)
    if (this.modern) return undefined
    this.modern = true
    const id = this.ownId({ kind: "initialize", discover: message.id })
    this.ends.toServer(initializeFor(message, id))
    return undefined
  }

  private ownAnswer(id: string, frame: Json): undefined {
    const own = this.own.get(id)!
    this.own.delete(id)
    if (own.kind === "initialize") {
      const waiting = this.waitingDiscovers.splice(0)
      if (!isObject(frame.result)) {
        for (const discover of waiting) this.ends.toClient({ ...frame, id: discover } as JSONRPCMessage)
        return undefined
      }
      this.discovered = discoverResult(frame.result)
      this.ends.toServer(INITIALIZED)
      for (const discover of waiting)
        this.ends.toClient({ jsonrpc: "2.0", id: discover, result: this.discovered } as JSONRPCMessage)
      return undefined
    }
    // The task ended but its result cannot be read: the extension's failed task, with the reason.
    const result = isObject(frame.result)
      ? completedTask(own.task, frame.result)
      : { ...extensionTask(own.task), status: "failed", error: isObject(frame.error) ? frame.error : {} }
    this.ends.toClient({ jsonrpc: "2.0", id: own.client, result } as JSONRPCMessage)
    return undefined
  }

  private ask(own: Own, method: string, params: Json) {
    this.ends.toServer({ jsonrpc: "2.0", id: this.ownId(own), method, params } as JSONRPCMessage)
  }

  private ownId(own: Own): string {
    const id = `${OWN_ID}${++this.next}`
    this.own.set(id, own)
    return id
  }
}
