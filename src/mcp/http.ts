// `serve --http [HOST:]PORT`: the same server over Streamable HTTP, for a client that connects to a URL
// instead of starting a process. The SDK's handler serves both revisions (createMcpHandler: 2026-07-28,
// and 2025 requests statelessly); in front of it, on every request, what the handler leaves to its host:
// a bearer token (created at the first start in the state dir, 0600, compared in constant time), the
// `Host` and `Origin` checks against DNS rebinding, and loopback unless the user names another address
// (then TLS in front is theirs to add: README "HTTP"). Each request gets a server from the same factory
// as stdio, so the tools, their limits and the policy are the same.
import { randomBytes, timingSafeEqual } from "node:crypto"
import { lstat, readFile } from "node:fs/promises"
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from "@modelcontextprotocol/server"
import { fail } from "../errors"
import { writeDurable } from "../util/fs"
import type { OpenBackend } from "./define"
import { createServer } from "./server"

/** Where the endpoint listens. */
export interface Listen {
  host: string
  port: number
}

const LOOPBACK = "127.0.0.1"

/** `PORT`, `HOST:PORT` or `[IPv6]:PORT`; loopback when no host is named; port 0 picks a free one. */
export function parseListen(text: string): Listen {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text.trim())
  const port = match ? Number(match[2]) : Number.NaN
  if (!match || port > 65535)
    throw fail(
      "Usage",
      `--http takes [HOST:]PORT, got "${text}".`,
      "Pass a port (serve --http 8765), or a host and a port (serve --http 127.0.0.1:8765).",
    )
  return { host: match[1]?.replace(/^\[|\]$/g, "") ?? LOOPBACK, port }
}

const TOKEN = /^[0-9a-f]{64}$/

/**
 * The endpoint's bearer token: read from `file`, or created there at the first start (written whole or not at all,
 * readable by its owner only). A file that is not a token is refused, never replaced: a client holds its value.
 */
export async function endpointToken(file: string): Promise<string> {
  const info = await lstat(file).catch(() => undefined) // absent: created below
  if (!info) {
    const token = randomBytes(32).toString("hex")
    await writeDurable(file, `${token}\n`, 0o600)
    return token
  }
  const problem = !info.isFile()
    ? "is not a regular file"
    : info.mode & 0o077
      ? "can be read by others than its owner"
      : undefined
  const token = problem ? "" : (await readFile(file, "utf8")).trim()
  if (problem || !TOKEN.test(token))
    throw fail(
      "Prerequisite",
      `The HTTP endpoint's token file ${file} ${problem ?? "does not hold a token"}.`,
      "Delete it; the next `serve --http` creates a new token (give it to your clients again).",
    )
  return token
}

export interface HttpEndpoint {
  url: string
  stop(): Promise<void>
}

/** Starts the endpoint; every request is checked (token, Host, Origin) before the SDK's handler sees it. */
export function serveHttp(listen: Listen, token: string, open: OpenBackend, roles = ""): HttpEndpoint {
  const handler = createMcpHandler(() => createServer(open, roles), { legacy: "stateless" })
  const hostnames = [...new Set([...localhostAllowedHostnames(), listen.host])]
  const expected = Buffer.from(`Bearer ${token}`)
  const server = Bun.serve({
    hostname: listen.host,
    port: listen.port,
    // A foreground call is answered when it ends (up to its sync budget); Bun's default 10 s idle cut would drop it.
    idleTimeout: 0,
    fetch: (request) =>
      hostHeaderValidationResponse(request, hostnames) ??
      originValidationResponse(request, localhostAllowedOrigins()) ??
      unauthorized(request, expected) ??
      handler.fetch(request),
  })
  const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host
  return { url: `http://${host}:${server.port}/mcp`, stop: () => server.stop(true) }
}

/** 401 unless the request carries the token; the comparison takes the same time however much of it matches. */
function unauthorized(request: Request, expected: Buffer): Response | undefined {
  const given = Buffer.from(request.headers.get("authorization") ?? "")
  if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined
  const error = {
    code: -32001,
    message:
      "Unauthorized: send the header Authorization: Bearer <token>, the token in the state dir's http-token file.",
  }
  return Response.json(
    { jsonrpc: "2.0", error },
    { status: 401, headers: { "WWW-Authenticate": 'Bearer realm="opencode-agents"' } },
  )
}
