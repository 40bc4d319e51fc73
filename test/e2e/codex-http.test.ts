// Codex as the parent over Streamable HTTP: the compiled `serve --http` on a loopback port, registered in Codex's
// config.toml as docs/clients.md says (`url` and `bearer_token_env_var`), the real `codex exec`, OpenCode and
// bwrap behind it. A scout's report reaches Codex's model in its next request. Control: with the wrong token in
// that variable the endpoint refuses Codex, whose model gets Codex's own error and never our report.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { type HttpServe, startHttpServe } from "../helpers/http-serve"
import { BINARY } from "../helpers/mcp"
import { codexCall, codexWorld, scriptedProvider, TOOL } from "./_codex"

/** A free loopback port, chosen before Codex's config is written (the endpoint binds it right after). */
function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

const PORT = freePort()
const TOKEN_VARIABLE = "OPENCODE_AGENTS_TOKEN"

const world = codexWorld({
  files: { "README.md": "# tally over http\n" },
  scripts: () => ({}),
  home: { config: { policy: { requireTier: false } } },
  config: (modelUrl) => [
    ...scriptedProvider(modelUrl),
    "[mcp_servers.opencode-agents]",
    `url = "http://127.0.0.1:${PORT}/mcp"`,
    `bearer_token_env_var = "${TOKEN_VARIABLE}"`,
    "tool_timeout_sec = 300",
  ],
})

let serve: HttpServe | undefined

beforeAll(async () => {
  const command = [BINARY, "serve", "--http", `127.0.0.1:${PORT}`]
  serve = await startHttpServe(command, world.home.env, world.home.paths.stateDir)
}, 60_000)

afterAll(async () => {
  await serve?.stop()
})

test("scout over HTTP: Codex's model receives the scout's report in its next request", async () => {
  const { result, parent, got } = await codexCall(
    world,
    "parent_http_scout",
    TOOL("scout"),
    { cwd: world.repo, task: "What does the README say?" },
    { env: { [TOKEN_VARIABLE]: serve!.token } },
  )
  expect(result.code).toBe(0)
  expect(parent).toHaveLength(2)
  expect(parent[0]?.body.tools?.map((t) => t.function.name)).toContain(TOOL("scout"))
  expect(got).toMatchObject({ status: "succeeded" })
  expect(String(got.report)).toContain("# tally over http")
}, 180_000)

test("control: a wrong token is refused by the endpoint; Codex's model gets no tool of ours and no report", async () => {
  const { result, parent, got } = await codexCall(
    world,
    "parent_http_refused",
    TOOL("scout"),
    { cwd: world.repo, task: "What does the README say?" },
    { env: { [TOKEN_VARIABLE]: "0".repeat(64) } },
  )
  expect(result.code).toBe(0)
  expect(parent[0]?.body.tools?.map((t) => t.function.name) ?? []).not.toContain(TOOL("scout"))
  expect(got).toEqual({})
}, 180_000)
