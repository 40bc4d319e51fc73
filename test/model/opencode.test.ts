// The scripted model against the real OpenCode (node_modules/.bin/opencode): headless `opencode run`
// in an isolated HOME and XDG dirs, offline, proving that the tools really ran and that a second
// user message in the same session plays the script's second turn.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, resolve } from "node:path"
import { opencodeProviderConfig } from "../../src/model/provider"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { run } from "../../src/util/process"

const OPENCODE = resolve(import.meta.dir, "../../node_modules/.bin/opencode")
const SECRET = `fixture-${crypto.randomUUID()}`

let model: ScriptedModel
let root: string
let env: Record<string, string>

beforeAll(async () => {
  model = await startScriptedModel({
    scripts: {
      fixture: {
        turns: [
          {
            steps: [
              { tool: "read", args: { filePath: "notes.txt" }, fail: { kind: "429" } },
              { text: "The file says: {{lastToolOutput}}" },
            ],
          },
          {
            steps: [
              { tool: "bash", args: { command: "cat second.txt", description: "Show second.txt" } },
              { text: "Second turn saw: {{lastToolOutput}}" },
            ],
          },
        ],
      },
    },
  })
  root = await mkdtemp(`${tmpdir()}/scripted-model-`)
  for (const dir of ["home", "config", "data", "state", "cache", "project"]) await mkdir(`${root}/${dir}`)
  await Bun.write(`${root}/project/notes.txt`, `the secret is ${SECRET}\n`)
  await Bun.write(`${root}/project/second.txt`, "second file\n")
  const config = {
    ...opencodeProviderConfig(model.url),
    permission: { bash: "allow", external_directory: "deny", doom_loop: "deny" },
  }
  env = {
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: `${root}/home`,
    XDG_CONFIG_HOME: `${root}/config`,
    XDG_DATA_HOME: `${root}/data`,
    XDG_STATE_HOME: `${root}/state`,
    XDG_CACHE_HOME: `${root}/cache`,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  }
})

afterAll(async () => {
  await model?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

interface RunEvent {
  type: string
  sessionID?: string
  part?: { text?: string }
}

async function opencodeRun(...args: string[]) {
  const result = await run([OPENCODE, "run", "--format", "json", ...args], {
    cwd: `${root}/project`,
    env,
    timeoutMs: 90_000,
  })
  expect({ code: result.code, stderr: result.stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) })
  const events = result.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as RunEvent)
  return {
    events,
    text: events
      .filter((e) => e.type === "text")
      .map((e) => e.part?.text ?? "")
      .join(""),
  }
}

test("OpenCode executes the scripted read, retries a 429, and a second message plays turn two", async () => {
  const first = await opencodeRun("Summarize notes.txt [script:fixture]")
  const session = first.events.find((e) => e.sessionID)?.sessionID
  expect(session).toStartWith("ses_")

  // The model saw the real file through OpenCode's read tool, and quoted it back.
  const read = model.toolResults().find((r) => r.tool === "read")
  expect(read?.output).toContain(SECRET)
  expect(first.text).toContain(`The file says:`)
  expect(first.text).toContain(SECRET)

  // The title generator was answered, and the rate-limited first step was retried by OpenCode.
  expect(model.requests.filter((r) => r.play.kind === "title").length).toBe(1)
  expect(model.requests.filter((r) => r.failed === "429").length).toBe(1)
  expect(model.requests.every((r) => r.sessionId === session)).toBe(true)

  // A follow-up in the same session, routed to the second model, plays the script's second turn.
  const second = await opencodeRun("--session", session!, "-m", "scripted/second", "And now second.txt")
  expect(second.text).toContain("Second turn saw: second file")
  const turnTwo = model.stepRequests().filter((r) => r.play.kind === "step" && r.play.turn === 1)
  expect(turnTwo.length).toBe(2)
  expect(turnTwo.every((r) => r.body.model === "second")).toBe(true)
  expect(model.toolResults().find((r) => r.tool === "bash")?.output).toContain("second file")
}, 180_000)
