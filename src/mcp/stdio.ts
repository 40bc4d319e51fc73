// The stdio transport `serve` uses: newline-delimited JSON-RPC like the SDK's, but a line over the
// size cap is refused with an error and skipped (the SDK's buffer throws and the server exits), every
// frame passes the gate (gate.ts) first, and the SDK's input-validation dumps are turned into the
// same "what is wrong / next:" text every other refusal uses. A client that opens with `server/discover`
// (protocol 2026-07-28) declaring the tasks extension is translated to and from the SDK's revision by
// revision-link.ts.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { gate, INVALID_REQUEST, type GateState } from "./gate"
import { RevisionLink } from "./revision-link"

/** The largest frame accepted. Briefs are capped far lower (64 KiB by default); this bounds memory. */
const MAX_LINE_BYTES = 4 * 1024 * 1024

export class GuardedStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private pieces: Buffer[] = []
  private size = 0
  /** Set while the rest of an oversize line is skipped. */
  private skipping = false
  private state: GateState = { initialized: false }
  private link = new RevisionLink({
    toServer: (message) => this.onmessage?.(message),
    toClient: (message) => void this.write(message),
  })

  constructor(
    private input: NodeJS.ReadableStream = process.stdin,
    private output: NodeJS.WritableStream = process.stdout,
  ) {}

  private ondata = (chunk: Buffer) => {
    let start = 0
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, end))
      this.finishLine()
      start = end + 1
    }
    if (start < chunk.length) this.take(chunk.subarray(start))
  }

  private take(part: Buffer) {
    if (this.skipping) return
    this.size += part.length
    if (this.size > MAX_LINE_BYTES) {
      this.skipping = true
      this.pieces = []
      return
    }
    this.pieces.push(part)
  }

  private finishLine() {
    if (this.skipping) {
      this.skipping = false
      this.size = 0
      void this.send({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: INVALID_REQUEST,
          message:
            `Request too large: a message over ${MAX_LINE_BYTES} bytes was refused and skipped. Send ` +
            `smaller arguments (point at files by path instead of pasting them).`,
        },
      } as unknown as JSONRPCMessage)
      return
    }
    const raw = Buffer.concat(this.pieces).toString("utf8").replace(/\r$/, "")
    this.pieces = []
    this.size = 0
    if (!raw.trim()) return
    const line = this.link.inbound(raw)
    if (line === undefined) return
    if (this.link.initialized) this.state.initialized = true
    const verdict = gate(line, this.state)
    if ("reply" in verdict) void this.send(verdict.reply)
    else if ("forward" in verdict) this.onmessage?.(verdict.forward)
  }

  private onstreamerror = (error: Error) => this.onerror?.(error)

  async start(): Promise<void> {
    this.input.on("data", this.ondata)
    this.input.on("error", this.onstreamerror)
    // A client that left closes the pipe; a late result then meets EPIPE, which must not end the process
    // that still owns its tasks' deadlines.
    this.output.on("error", this.onstreamerror)
  }

  send(message: JSONRPCMessage): Promise<void> {
    const out = this.link.outbound(message)
    return out === undefined ? Promise.resolve() : this.write(out)
  }

  private write(message: JSONRPCMessage): Promise<void> {
    const text = `${JSON.stringify(readableValidation(message))}\n`
    return new Promise((resolve) => {
      if (this.output.write(text)) resolve()
      else this.output.once("drain", resolve)
    })
  }

  async close(): Promise<void> {
    this.input.off("data", this.ondata)
    this.input.off("error", this.onstreamerror)
    this.output.off("error", this.onstreamerror)
    if (this.input.listenerCount("data") === 0) (this.input as NodeJS.ReadStream).pause?.()
    this.onclose?.()
  }
}

const VALIDATION = /^MCP error -32602: Input validation error: Invalid arguments for tool (\S+): ([\s\S]*)$/

/**
 * The SDK reports bad arguments as "problem at field" lines after an error code; say them as "field: problem" with a
 * next step.
 */
function readableValidation(message: JSONRPCMessage): JSONRPCMessage {
  const result = (message as { result?: { isError?: boolean; content?: { type: string; text?: string }[] } }).result
  const text = result?.isError && result.content?.length === 1 ? result.content[0]?.text : undefined
  const match = text ? VALIDATION.exec(text) : null
  if (!match) return message
  const lines = match[2]!
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const at = line.lastIndexOf(" at ")
      return at > 0 ? `${line.slice(at + 4)}: ${line.slice(0, at)}` : line
    })
  const readable =
    `Invalid arguments for ${match[1]}:\n${lines.map((line) => `  - ${line}`).join("\n")}\nnext: ` +
    `Fix the argument${lines.length > 1 ? "s" : ""} above; tools/list gives ${match[1]}'s schema.`
  return { ...message, result: { ...result, content: [{ type: "text", text: readable }] } } as JSONRPCMessage
}
