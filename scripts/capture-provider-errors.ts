// Captures what OpenCode reports when a provider fails: each of the scripted model's failure modes
// (src/model/script.ts) is played to a scout on the real OpenCode, and the session.error event, the
// assistant message's error, the last retry message and our result's error are written to
// test/engine/fixtures/provider-errors.json, which test/engine/failure.test.ts classifies.
//   bun scripts/capture-provider-errors.ts [kind,kind,...]
import type { Event } from "@opencode-ai/sdk/v2"
import { readFlags } from "../src/config/flags"
import { Delegations } from "../src/engine/lifecycle"
import { Runtime } from "../src/engine/capacity/runtime"
import { createRepository } from "../src/model/demo"
import { createIsolatedHome } from "../src/model/home"
import type { ScriptInput } from "../src/model/script"
import { startScriptedModel } from "../src/model/server"
import { stopServer } from "../src/opencode/server"
import { TEST_PATH } from "../test/helpers/mcp"

const kinds = (process.argv[2] ?? "401,quota,unknown_model,context,503,429,500,cut").split(",")
const scripts: Record<string, ScriptInput> = {}
for (const kind of kinds)
  scripts[`f_${kind}`] = {
    turns: [{ steps: [{ text: "never", fail: { kind: kind as never, times: "always", retryAfterSeconds: 2 } }] }],
  }
const model = await startScriptedModel({ scripts })
const home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
// Preserved sessions keep their messages, so the assistant message's error can be read afterwards.
const runtime = new Runtime({ ...readFlags(home.env), preserveSessions: true })
const delegations = new Delegations(runtime)
const repo = await createRepository("oc-orch-capture-", { "README.md": "# r\n" })

type Payload = { name: string; data: Record<string, unknown> }
/** Dates and URLs vary per run; only the retry-after headers matter to the classifier. */
const strip = (error: Payload | undefined) =>
  error && {
    name: error.name,
    data: Object.fromEntries(
      Object.entries(error.data)
        .filter(([key]) => key !== "metadata")
        .map(([key, value]) =>
          key === "responseHeaders"
            ? [
                key,
                Object.fromEntries(
                  Object.entries(value as Record<string, string>).filter(([header]) =>
                    header.startsWith("retry-after"),
                  ),
                ),
              ]
            : [key, value],
        ),
    ),
  }

const captured: Record<string, unknown> = {}
try {
  const { hub, client } = await runtime.opencode()
  const errors = new Map<string, Payload>()
  const retries = new Map<string, string>()
  hub.onAny((event: Event) => {
    if (event.type === "session.error" && event.properties.sessionID && event.properties.error)
      errors.set(event.properties.sessionID, event.properties.error as Payload)
    if (event.type === "session.status" && event.properties.status.type === "retry")
      retries.set(event.properties.sessionID, event.properties.status.message)
  })
  await Promise.all(
    kinds.map(async (kind) => {
      const { record } = await delegations.start({
        role: "scout",
        agent: "opencode-orchestrator-scout",
        cwd: repo,
        brief: `[script:f_${kind}] go`,
        title: kind,
        writable: false,
        timeoutMs: 25_000,
        policy: { delegation: { role: "scout" }, texts: { task: `[script:f_${kind}] go` } },
      })
      const done = (await delegations.follow(record.id))!
      const sessionID = done.sessions[0]!
      const messages = await client.session.messages({ sessionID, directory: repo })
      const messageError = messages.data
        ?.map((message) => (message.info.role === "assistant" ? message.info.error : undefined))
        .find(Boolean) as Payload | undefined
      captured[kind] = {
        status: done.status,
        sessionError: strip(errors.get(sessionID)),
        messageError: strip(messageError),
        lastRetry: retries.get(sessionID),
        error: done.result?.error,
      }
    }),
  )
} finally {
  await delegations.shutdown()
  runtime.close()
  await stopServer(home.paths)
  await model.stop()
  await home.dispose()
}
const note =
  "Captured from the real OpenCode driving the scripted model (scripts/capture-provider-errors.ts): per failure " +
  "mode, the task status, the session.error event, the assistant message error, the last retry status message and " +
  "our result error. Response dates and URLs dropped."
await Bun.write(
  `${import.meta.dir}/../test/engine/fixtures/provider-errors.json`,
  `${JSON.stringify({ "//": note, captured }, null, 2)}\n`,
)
console.log(Object.entries(captured).map(([kind, value]) => `${kind}: ${(value as { status: string }).status}`))
