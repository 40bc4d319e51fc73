// The shared OpenCode server lives while any MCP server process uses it, and is stopped by the last
// one to leave when no work of its is running.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { rm } from "node:fs/promises"
import { createDemoRepository } from "../../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { readServerRecord, stopServer } from "../../src/opencode/server"
import { alive } from "../../src/util/process"
import { connectStdio, TEST_PATH } from "../helpers/mcp"

let model: ScriptedModel
let home: IsolatedHome
let repo: string

beforeAll(async () => {
  model = await startScriptedModel()
  home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
  repo = await createDemoRepository()
})

afterAll(async () => {
  await stopServer(home.paths)
  await model.stop()
  await home.dispose()
  await rm(repo, { recursive: true, force: true })
})

async function gone(pid: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  while (alive(pid) && Date.now() < deadline) await Bun.sleep(50)
  return !alive(pid)
}

test("the last MCP server process to leave stops the shared OpenCode server", async () => {
  const first = await connectStdio(home.env)
  const second = await connectStdio(home.env)
  const result = await first.client.callTool({ name: "scout", arguments: { cwd: repo, task: "look around" } })
  expect((result.structuredContent as { status: string }).status).toBe("succeeded")
  const record = (await readServerRecord(home.paths))!
  expect(alive(record.pid)).toBe(true)

  await first.close()
  expect(await gone(first.pid)).toBe(true)
  expect(alive(record.pid)).toBe(true) // the second process still holds a lease

  await second.close()
  expect(await gone(second.pid)).toBe(true)
  expect(await gone(record.pid)).toBe(true)
  // The first process's watchdog may be the last to leave: the record goes just after the server.
  const deadline = Date.now() + 10_000
  while ((await readServerRecord(home.paths)) && Date.now() < deadline) await Bun.sleep(50)
  expect(await readServerRecord(home.paths)).toBeUndefined()
})
