// `serve --http` (src/mcp/http.ts) as a client reaches it: the real `serve` process on a loopback port,
// the SDK client over Streamable HTTP. Guarantees, each with its attack beside a control: no request is
// served without the token (none, a wrong one of the same length), no request naming another Host or a
// foreign Origin is served (DNS rebinding), and the token file is made once, private, and never taken
// from a file that is not one (garbage, readable by others, a link planted in its place). Both revisions
// are served with the same tools. Nothing here delegates, so no OpenCode starts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { Client, StreamableHTTPClientTransport, type CallToolResult } from "@modelcontextprotocol/client"
import { chmod, lstat, mkdir, symlink, writeFile } from "node:fs/promises"
import { type HttpServe, startHttpServe } from "../helpers/http-serve"
import { tempDir, type TempDir } from "../helpers/temp"

const ROOT = `${import.meta.dir}/../..`

type Running = HttpServe

let home: TempDir
let served: Running

const envOf = (dir: string) => ({
  HOME: dir,
  XDG_STATE_HOME: `${dir}/state`,
  XDG_CONFIG_HOME: `${dir}/config`,
  XDG_DATA_HOME: `${dir}/data`,
  XDG_CACHE_HOME: `${dir}/cache`,
  PATH: process.env.PATH ?? "/usr/bin:/bin",
})

const tokenFile = (dir: string) => `${dir}/state/opencode-mcp-orchestrator/http-token`

/** Starts `serve --http 127.0.0.1:0` in `dir`; resolves with its URL once it says it serves. */
const serveHttp = (dir: string): Promise<Running> =>
  startHttpServe(
    ["bun", `${ROOT}/src/cli/main.ts`, "serve", "--http", "127.0.0.1:0"],
    envOf(dir),
    `${dir}/state/opencode-mcp-orchestrator`,
  )

/** `serve --http` that is expected to refuse to start: its exit code and what it said. */
async function refusedStart(dir: string) {
  const child = Bun.spawn(["bun", `${ROOT}/src/cli/main.ts`, "serve", "--http", "127.0.0.1:0"], {
    env: envOf(dir),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  })
  const said = await new Response(child.stderr).text()
  return { code: await child.exited, said }
}

const post = (headers: Record<string, string>, body: unknown = { jsonrpc: "2.0", id: 1, method: "ping" }) =>
  fetch(served.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  })

async function connect(options: { token?: string; modern?: boolean } = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(served.url), {
    requestInit: { headers: { authorization: `Bearer ${options.token ?? served.token}` } },
  })
  const client = new Client(
    { name: "http-tests", version: "1" },
    options.modern ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  )
  await client.connect(transport)
  return client
}

beforeAll(async () => {
  home = await tempDir("oc-orch-http-")
  served = await serveHttp(home.path)
})

afterAll(async () => {
  await served?.stop()
  await home?.[Symbol.asyncDispose]()
})

describe("the token", () => {
  test("is made at the first start, 64 hex digits, readable by its owner only", async () => {
    expect(served.token).toMatch(/^[0-9a-f]{64}$/)
    expect((await lstat(tokenFile(home.path))).mode & 0o777).toBe(0o600)
  })

  test("attack: no token, or a wrong one of the same length, is refused with 401; control: the token is served", async () => {
    const wrong = `${served.token.slice(0, -1)}${served.token.endsWith("0") ? "1" : "0"}`
    const tried: Record<string, string>[] = [{}, { authorization: `Bearer ${wrong}` }, { authorization: served.token }]
    for (const headers of tried) {
      const response = await post(headers)
      expect(response.status).toBe(401)
      expect(await response.text()).toContain("Authorization: Bearer")
    }
    const fine = await post({ authorization: `Bearer ${served.token}` })
    expect(fine.status).toBe(200)
  })

  test("a client with the wrong token cannot connect; control: with the token it lists the tools", async () => {
    await expect(connect({ token: "0".repeat(64) })).rejects.toThrow()
    const client = await connect()
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("scout")
    } finally {
      await client.close()
    }
  })
})

describe("DNS rebinding", () => {
  test("attack: another Host, or a foreign Origin, is refused; control: a loopback Origin is served", async () => {
    const bearer = { authorization: `Bearer ${served.token}` }
    const host = await post({ ...bearer, host: "evil.example" })
    expect(host.status).toBe(403)
    expect(await host.text()).toContain("Invalid Host")
    const origin = await post({ ...bearer, origin: "http://evil.example" })
    expect(origin.status).toBe(403)
    expect(await origin.text()).toContain("Invalid Origin")
    const port = new URL(served.url).port
    expect((await post({ ...bearer, origin: `http://localhost:${port}` })).status).toBe(200)
  })
})

describe("both revisions, the same tools", () => {
  test.each([false, true])("modern=%p: tools/list and a refused call read as over stdio", async (modern) => {
    const client = await connect({ modern })
    try {
      expect((await client.listTools()).tools.length).toBe(19)
      const result = (await client.callTool({ name: "task_status", arguments: {} })) as CallToolResult
      expect(result.isError).toBe(true)
      const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("")
      expect(text).toStartWith("Invalid arguments for task_status:\n  - task_id:")
    } finally {
      await client.close()
    }
  })
})

describe("a token file that is not one is refused, never replaced", () => {
  const cases: [string, (file: string) => Promise<void>][] = [
    ["garbage", (file) => writeFile(file, "not a token\n", { mode: 0o600 })],
    [
      "readable by others",
      async (file) => {
        await writeFile(file, `${"a".repeat(64)}\n`, { mode: 0o600 })
        await chmod(file, 0o644)
      },
    ],
    ["a link planted in its place", (file) => symlink("/etc/hostname", file)],
  ]
  test.each(cases)("%s: serve --http exits 4 with the fix, the file as it was", async (_, plant) => {
    await using dir = await tempDir("oc-orch-http-bad-")
    const file = tokenFile(dir.path)
    await mkdir(`${dir.path}/state/opencode-mcp-orchestrator`, { recursive: true })
    await plant(file)
    const before = await lstat(file)
    const { code, said } = await refusedStart(dir.path)
    expect(code).toBe(4)
    expect(said).toContain("token file")
    expect(said).toContain("Delete it")
    expect(said).not.toMatch(/\bat .*\.ts:\d+/)
    const after = await lstat(file)
    expect([after.ino, after.mode, after.size]).toEqual([before.ino, before.mode, before.size])
  })

  test("control: a good token file is kept across starts", async () => {
    await using dir = await tempDir("oc-orch-http-keep-")
    const first = await serveHttp(dir.path)
    await first.stop()
    const second = await serveHttp(dir.path)
    await second.stop()
    expect(second.token).toBe(first.token)
  })
})

test("a bad address is refused with the form it takes", async () => {
  const child = Bun.spawn(["bun", `${ROOT}/src/cli/main.ts`, "serve", "--http", "localhost:99999"], {
    env: envOf(home.path),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  })
  const said = await new Response(child.stderr).text()
  expect(await child.exited).toBe(2)
  expect(said).toContain("--http takes [HOST:]PORT")
})
