// The stdio transport `serve` hands serveStdio: newline-delimited JSON-RPC like the SDK's, but a line
// over the size cap is refused with an error and skipped (the SDK's transport closes the connection on
// one), and every frame passes the gate (gate.ts) first, which answers what the SDK leaves unanswered.
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server"
import { gate, INVALID_REQUEST, type GateState } from "./gate"

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
    const verdict = gate(raw, this.state)
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
    const text = `${JSON.stringify(message)}\n`
    return new Promise((resolve) => {
      if (this.output.write(text)) resolve()
      else this.output.once("drain", resolve)
    })
  }

  /** Resolves once the transport closed, whoever closed it (serveStdio owns its onclose). */
  readonly closed = new Promise<void>((resolve) => {
    this.ended = resolve
  })
  private ended!: () => void

  async close(): Promise<void> {
    this.input.off("data", this.ondata)
    this.input.off("error", this.onstreamerror)
    this.output.off("error", this.onstreamerror)
    if (this.input.listenerCount("data") === 0) (this.input as NodeJS.ReadStream).pause?.()
    this.onclose?.()
    this.ended()
  }
}
