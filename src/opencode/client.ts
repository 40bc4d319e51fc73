// A connection to the shared OpenCode server: the SDK v2 client with our credentials, and one
// event stream (`/global/event`, all directories) fanned out to listeners by session id.
import { createOpencodeClient, type Event, type OpencodeClient } from "@opencode-ai/sdk/v2"
import { neutralStandIn, provideStandIn } from "../sandbox/stand-ins"
import { authHeader, type ServerRecord } from "./server"

export type { Event }

export interface ConnectOptions {
  /** paths.opencodeDirsDir: where the stand-ins OpenCode is given instead of directories live. */
  standIns: string
  /** The directory every request names unless it names its own. */
  directory?: string
}

export function connect(record: ServerRecord, options: ConnectOptions): OpencodeClient {
  return createOpencodeClient({
    baseUrl: record.url,
    headers: { authorization: authHeader(record) },
    directory: options.directory,
    fetch: standInFetch(options.standIns) as typeof fetch,
  })
}

const DIRECTORY_HEADER = "x-opencode-directory"
const DIRECTORY_QUERIES = ["directory", "location[directory]"]

/**
 * Every request leaves naming a stand-in, never a directory an agent could write (sandbox/stand-ins.ts):
 * the directory of a request (its header or its query) is replaced by that directory's stand-in, and a
 * request naming none names the neutral stand-in, so OpenCode never falls back to its own working
 * directory. This is the one place the product's requests pass, so no use case can skip it.
 */
function standInFetch(root: string) {
  return (request: Request) => {
    const url = new URL(request.url)
    const header = request.headers.get(DIRECTORY_HEADER)
    let named = false
    for (const key of DIRECTORY_QUERIES) {
      const value = url.searchParams.get(key)
      if (!value) continue
      url.searchParams.set(key, provideStandIn(root, value))
      named = true
    }
    const next: Request & { timeout?: boolean } = new Request(url.toString(), request)
    // A request naming no directory names the neutral one in the header, never the query: OpenCode reads
    // either to pick the instance, but some routes also read the query as a filter (the global session
    // list would then list the neutral stand-in's sessions only).
    const standIn = header ? provideStandIn(root, decodeURIComponent(header)) : named ? undefined : neutralStandIn(root)
    if (standIn) next.headers.set(DIRECTORY_HEADER, encodeURIComponent(standIn))
    // Bun's fetch times out long requests (a prompt waits for the whole turn) unless told not to.
    next.timeout = false
    return fetch(next)
  }
}

type Listener = (event: Event) => void

/** One SSE connection per process; reconnects when the server restarts or the stream drops. */
export class EventHub {
  private listeners = new Map<string, Set<Listener>>()
  private any = new Set<Listener>()
  private controller = new AbortController()
  private ready: Promise<void>
  private markReady!: () => void
  private closed = false

  constructor(private record: ServerRecord) {
    this.ready = new Promise((resolve) => (this.markReady = resolve))
    void this.loop()
  }

  /** Resolves once the stream is connected, so no event of a session started after it is missed. */
  connected(timeoutMs = 10_000): Promise<void> {
    return Promise.race([
      this.ready,
      Bun.sleep(timeoutMs).then(() => Promise.reject(new Error("OpenCode's event stream did not connect"))),
    ])
  }

  on(sessionID: string, listener: Listener): () => void {
    const set = this.listeners.get(sessionID) ?? new Set()
    set.add(listener)
    this.listeners.set(sessionID, set)
    return () => {
      set.delete(listener)
      if (set.size === 0) this.listeners.delete(sessionID)
    }
  }

  /** Every event, whatever its session (permission policy, diagnostics). */
  onAny(listener: Listener): () => void {
    this.any.add(listener)
    return () => this.any.delete(listener)
  }

  close() {
    this.closed = true
    this.controller.abort()
  }

  // Read with fetch rather than the SDK's SSE helper: on abort that helper leaves a rejected
  // `reader.cancel()` promise unhandled, which takes down the process that closes the hub.
  private async loop() {
    while (!this.closed) {
      try {
        const response = await fetch(`${this.record.url}/global/event`, {
          headers: { authorization: authHeader(this.record), accept: "text/event-stream" },
          signal: this.controller.signal,
        })
        if (!response.ok || !response.body) throw new Error(`event stream answered ${response.status}`)
        let buffer = ""
        for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
          buffer += chunk
          const frames = buffer.split("\n\n")
          buffer = frames.pop() ?? ""
          for (const frame of frames) this.frame(frame)
        }
      } catch {
        // The stream dropped (server restart, abort); reconnect below unless closed.
      }
      if (!this.closed) await Bun.sleep(250)
    }
  }

  private frame(frame: string) {
    const data = frame
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n")
    if (!data) return
    let event: Event | undefined
    try {
      event = (JSON.parse(data) as { payload?: Event }).payload
    } catch {
      // A malformed event frame is skipped; the stream goes on.
      return
    }
    if (!event) return
    if (event.type === "server.connected") this.markReady()
    this.dispatch(event)
  }

  private dispatch(event: Event) {
    for (const listener of this.any) listener(event)
    const sessionID = (event.properties as { sessionID?: string } | undefined)?.sessionID
    if (!sessionID) return
    for (const listener of this.listeners.get(sessionID) ?? []) listener(event)
  }
}
