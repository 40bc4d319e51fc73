// What Codex (npm @openai/codex, offline) hands its model for our server: one `namespace` tool whose
// description is our server instructions and whose tools are our 17, each with its name, description
// and parameters (no output schema). Read from the Responses request Codex sends to a recording
// endpoint on 127.0.0.1 that refuses every request (no model runs), and held at 12 KB in all.
// It measures the right thing: the namespace carries every registered tool and the instructions
// verbatim. Control: the binary built from the commit before this change fails it at 31,216 bytes.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { mkdir } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import instructions from "../../src/mcp/instructions.md" with { type: "text" }
import { run } from "../../src/util/process"
import { listOurTools } from "../mcp/_surface"
import { BINARY, ROOT, TEST_PATH } from "../helpers/mcp"
import { tempDir, type TempDir } from "../helpers/temp"

interface Namespace {
  type: string
  name: string
  description: string
  tools: Array<{ name: string; description: string; parameters: unknown }>
}

let home: TempDir
let endpoint: ReturnType<typeof Bun.serve>
const bodies: Array<{ tools?: Namespace[] }> = []

beforeAll(async () => {
  endpoint = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if (new URL(request.url).pathname.endsWith("/responses"))
        bodies.push((await request.json()) as { tools?: Namespace[] })
      return Response.json(
        { error: { message: "recorded, not answered", type: "invalid_request_error" } },
        { status: 400 },
      )
    },
  })
  home = await tempDir("oc-orch-codex-surface-")
  await mkdir(`${home.path}/.codex`, { recursive: true })
  const config = [
    'model = "gpt-5"',
    'model_provider = "recorder"',
    "[model_providers.recorder]",
    'name = "recorder"',
    `base_url = "http://127.0.0.1:${endpoint.port}/v1"`,
    'env_key = "RECORDER_KEY"',
    'wire_api = "responses"',
    "[mcp_servers.opencode-agents]",
    `command = "${BINARY}"`,
    'args = ["serve"]',
  ]
  await Bun.write(`${home.path}/.codex/config.toml`, `${config.join("\n")}\n`)
})

afterAll(async () => {
  endpoint?.stop(true)
  await home?.[Symbol.asyncDispose]()
})

test("Codex hands its model our tools and instructions in at most 12 KB", async () => {
  const env = { HOME: home.path, PATH: TEST_PATH, CODEX_HOME: `${home.path}/.codex`, RECORDER_KEY: "recorded" }
  await run([`${ROOT}/node_modules/.bin/codex`, "exec", "--skip-git-repo-check", "hi"], {
    cwd: home.path,
    env,
    timeoutMs: 90_000,
  })
  const ours = bodies[0]?.tools?.find((tool) => tool.name === "mcp__opencode_agents")
  expect(ours?.type).toBe("namespace")
  expect(Buffer.byteLength(JSON.stringify(ours))).toBeLessThanOrEqual(12_000)
  expect(ours?.description.trim()).toBe(instructions.trim())
  const registered = await listOurTools(readFlags({ HOME: home.path, PATH: TEST_PATH }))
  expect(ours?.tools.map((tool) => tool.name).sort()).toEqual(registered.map((tool) => tool.name).sort())
}, 120_000)
