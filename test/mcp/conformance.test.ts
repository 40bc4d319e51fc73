// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against the real
// `serve --http` process, for both revisions this server speaks (--requirements 2025-11-25 and
// 2026-07-28), judged against conformance-expected.yaml: the suite exits non-zero on a failure the file
// does not list, and on a listed one that passes (stale). The suite sends no Authorization header, so it
// talks to a loopback proxy that forwards each request unchanged (method, path, body, its own Host and
// Origin: dns-rebinding-protection needs the foreign Host to reach the server's check) and adds the token.
// Under --requirements the suite leaves its not-scored scenarios (the tasks extension, pending ones) out
// of the baseline, so each of those runs on its own at its revision. Controls: an empty baseline and a
// stale entry each fail the run, and without the token a scenario that passes with it fails. Nothing here
// delegates, so no OpenCode starts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { readFile, writeFile } from "node:fs/promises"
import { stripVTControlCharacters } from "node:util"
import { startHttpServe } from "../helpers/http-serve"
import { tempDir, type TempDir } from "../helpers/temp"

const ROOT = `${import.meta.dir}/../..`
const SUITE = `${ROOT}/node_modules/@modelcontextprotocol/conformance`
const EXPECTED = `${import.meta.dir}/conformance-expected.yaml`
const REVISIONS = ["2025-11-25", "2026-07-28"] as const
type Revision = (typeof REVISIONS)[number]
/** A scenario that hangs ends here, not at the test's own timeout (each takes well under a second). */
const SCENARIO_TIMEOUT_MS = 20_000
const RUN_TIMEOUT_MS = 120_000

interface Stoppable {
  url: string
  stop(): Promise<void>
}

/** A revision's server scenarios that its requirement set runs without scoring, and why. */
async function notScored(revision: Revision): Promise<{ scenario: string; reason: string }[]> {
  const set = Bun.YAML.parse(await readFile(`${SUITE}/requirements/${revision}.yaml`, "utf8")) as {
    not_scored?: { scenario: string; leg: string; reason: string }[]
  }
  return (set.not_scored ?? []).filter((entry) => entry.leg === "server")
}

const UNSCORED = (
  await Promise.all(
    REVISIONS.map(async (revision) =>
      (await notScored(revision)).map(({ scenario, reason }) => [revision, scenario, reason] as const),
    ),
  )
).flat()

let home: TempDir
let served: Stoppable & { token: string }
let proxy: Stoppable

/** Starts `serve --http 127.0.0.1:0` with `dir` as its home; resolves once it says where it serves. */
function serveHttp(dir: string): Promise<Stoppable & { token: string }> {
  const env = {
    HOME: dir,
    XDG_STATE_HOME: `${dir}/state`,
    XDG_CONFIG_HOME: `${dir}/config`,
    XDG_DATA_HOME: `${dir}/data`,
    XDG_CACHE_HOME: `${dir}/cache`,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
  }
  const command = ["bun", `${ROOT}/src/cli/main.ts`, "serve", "--http", "127.0.0.1:0"]
  return startHttpServe(command, env, `${dir}/state/opencode-mcp-orchestrator`)
}

/** A loopback proxy to `target` that passes every request on as it came, with the bearer token when given one. */
function startProxy(target: string, token: string | undefined): Stoppable {
  const upstream = new URL(target)
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0, // a stream held open by a scenario is the server's to time out, not the proxy's
    async fetch(request) {
      const { pathname, search } = new URL(request.url)
      const headers = new Headers(request.headers) // Host and Origin included, as the client sent them
      if (token) headers.set("authorization", `Bearer ${token}`)
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer()
      const answer = await fetch(`${upstream.origin}${pathname}${search}`, {
        method: request.method,
        headers,
        body,
        redirect: "manual",
        signal: request.signal,
      })
      return new Response(answer.body, {
        status: answer.status,
        statusText: answer.statusText,
        headers: answer.headers,
      })
    },
  })
  return { url: `http://127.0.0.1:${server.port}${upstream.pathname}`, stop: () => server.stop(true) }
}

interface Run {
  code: number
  /** What the suite printed, colours removed. */
  out: string
  unexpected: string[]
  stale: string[]
}

/** The `  <mark> entry` lines under `heading` in the suite's baseline report. */
function listed(out: string, heading: string): string[] {
  const at = out.indexOf(heading)
  if (at < 0) return []
  const lines = out
    .slice(at + heading.length)
    .split("\n")
    .slice(1)
  const end = lines.findIndex((line) => !/^ {2}\S/.test(line))
  return (end < 0 ? lines : lines.slice(0, end)).map((line) => line.trim().replace(/^\S+ /, ""))
}

/** Runs the suite's `server` command against `url` with `args`; its exit code and baseline verdicts. */
async function suite(url: string, args: string[]): Promise<Run> {
  const child = Bun.spawn(
    ["bun", `${SUITE}/dist/index.js`, "server", "--url", url, "--timeout", String(SCENARIO_TIMEOUT_MS), ...args],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  )
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  const out = stripVTControlCharacters(`${stdout}${stderr}`)
  return {
    code,
    out,
    unexpected: listed(out, "Unexpected failures (not in baseline):"),
    stale: listed(out, "Stale baseline entries (now passing - remove from baseline):"),
  }
}

/** The suite's own summary (from its SUMMARY line on), for the test log. */
const summaryOf = (out: string) => {
  const at = out.indexOf("=== SUMMARY ===")
  return at < 0 ? out : out.slice(at)
}

/** A single scenario's result line and the baseline's verdict on it, for the test log. */
const verdictOf = (out: string) =>
  out
    .split("\n")
    .filter((line) => /^(Passed: |Baseline check passed|Unexpected failures|Baseline is stale|\s+[✗✓~] )/.test(line))
    .join("\n")

const verdict = (run: Run) => ({ code: run.code, unexpected: run.unexpected, stale: run.stale })

beforeAll(async () => {
  home = await tempDir("oc-orch-conformance-")
  served = await serveHttp(home.path)
  proxy = startProxy(served.url, served.token)
})

afterAll(async () => {
  await proxy?.stop()
  await served?.stop()
  await home?.[Symbol.asyncDispose]()
})

describe("the conformance suite, each requirement set", () => {
  test.each(REVISIONS)(
    "%s: every required scenario passes, or fails as conformance-expected.yaml says",
    async (revision) => {
      const run = await suite(proxy.url, ["--requirements", revision, "--expected-failures", EXPECTED])
      console.log(`conformance --requirements ${revision}\n${summaryOf(run.out)}`)
      expect(run.out).toContain("=== SUMMARY ===")
      expect(verdict(run)).toEqual({ code: 0, unexpected: [], stale: [] })
      expect(run.out).toContain("Baseline check passed")
    },
    RUN_TIMEOUT_MS,
  )
})

describe("the scenarios a requirement set runs without scoring, each on its own at its revision", () => {
  test.each(UNSCORED)(
    "%s %s (%s): passes, or fails as conformance-expected.yaml says",
    async (revision, scenario) => {
      const run = await suite(proxy.url, [
        "--spec-version",
        revision,
        "--force",
        "--scenario",
        scenario,
        "--expected-failures",
        EXPECTED,
      ])
      console.log(`conformance ${revision} ${scenario}\n${verdictOf(run.out)}`)
      expect(run.out).toContain(`Running client scenario '${scenario}'`)
      expect(verdict(run)).toEqual({ code: 0, unexpected: [], stale: [] })
    },
    RUN_TIMEOUT_MS,
  )
})

describe("controls: the check can fail", () => {
  test(
    "with an empty baseline the same run fails, naming the scenarios that need the reference fixtures",
    async () => {
      const empty = `${home.path}/empty-baseline.yaml`
      await writeFile(empty, "server: []\n")
      const run = await suite(proxy.url, ["--requirements", "2026-07-28", "--expected-failures", empty])
      expect(run.code).toBe(1)
      expect(run.unexpected).toEqual(expect.arrayContaining(["tools-call-image", "caching", "server-stateless"]))
      expect(run.unexpected).not.toContain("tools-list")
      expect(run.stale).toEqual([])
    },
    RUN_TIMEOUT_MS,
  )

  test(
    "a baseline entry for a check that passes is stale and fails the run",
    async () => {
      const expected = Bun.YAML.parse(await readFile(EXPECTED, "utf8")) as { server: string[] }
      const stale = `${home.path}/stale-baseline.yaml`
      // JSON is YAML: the expected entries and one for a check that passes.
      await writeFile(stale, JSON.stringify({ server: [...expected.server, "tools-list:tools-list"] }))
      const run = await suite(proxy.url, ["--requirements", "2026-07-28", "--expected-failures", stale])
      expect(verdict(run)).toEqual({ code: 1, unexpected: [], stale: ["tools-list:tools-list"] })
    },
    RUN_TIMEOUT_MS,
  )

  test(
    "without the token every request is refused, and a scenario that passes with it fails",
    async () => {
      const tokenless = startProxy(served.url, undefined)
      try {
        const run = await suite(tokenless.url, [
          "--spec-version",
          "2026-07-28",
          "--scenario",
          "tools-list",
          "--expected-failures",
          EXPECTED,
        ])
        expect(run.code).toBe(1)
        expect(run.unexpected).toEqual(["tools-list"])
        expect(run.out).toContain("Unauthorized: send the header Authorization: Bearer <token>")
      } finally {
        await tokenless.stop()
      }
    },
    RUN_TIMEOUT_MS,
  )
})
