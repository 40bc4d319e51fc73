// A full (or read-only) state disk: the compiled `serve` runs in a mount namespace (bwrap) whose state
// dir is a tiny tmpfs filled to the brim, or a read-only bind. It still answers the handshake and tools/list, and every tool that needs
// the state dir says the disk is full and what to do, before anything starts; nothing half-written
// stays behind. Control: the same setup with room to spare gets past that check.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { mkdir } from "node:fs/promises"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { BINARY, connectStdio, TEST_PATH, textOf } from "../helpers/mcp"

let model: ScriptedModel
let home: IsolatedHome

beforeAll(async () => {
  model = await startScriptedModel()
  home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
  await mkdir(home.env.XDG_STATE_HOME!, { recursive: true })
})
afterAll(async () => {
  await model?.stop()
  await home?.dispose()
})

/** `serve` with the state dir on a small tmpfs: 64 KiB filled to the brim, or 4 MiB left empty. */
const serveOnTinyDisk = (full: boolean) => {
  const state = home.env.XDG_STATE_HOME!
  const fill = full ? `head -c 1000000 /dev/zero > ${state}/fill 2>/dev/null; ` : ""
  return connectStdio(home.env, ["/usr/bin/bwrap", "--dev-bind", "/", "/", "--size", full ? "65536" : "4194304", "--tmpfs", state, "--die-with-parent", "--", "/bin/bash", "-c", `${fill}exec "$@"`, "serve", BINARY, "serve"])
}

test("serve answers tools/list on a full state disk, and a delegation is refused with the reason and a fix", async () => {
  const mcp = await serveOnTinyDisk(true)
  try {
    const { tools } = await mcp.client.listTools()
    expect(tools.map((tool) => tool.name)).toContain("scout")
    const scout = (await mcp.client.callTool({ name: "scout", arguments: { cwd: `${import.meta.dir}`, task: "look" } })) as CallToolResult
    expect(scout.isError).toBe(true)
    expect(textOf(scout)).toMatch(/The state dir .* has \d+ bytes free; a task needs at least 1048576/)
    expect(textOf(scout)).toContain("next: Free space")
    expect(model.stepRequests().length).toBe(0)
  } finally {
    await mcp.close()
  }
}, 60_000)

test("control: with room on a small disk, the space check passes (the refusal is the disk, not the setup)", async () => {
  const mcp = await serveOnTinyDisk(false)
  try {
    const scout = (await mcp.client.callTool({ name: "scout", arguments: { cwd: "/nonexistent/dir", task: "look" } })) as CallToolResult
    expect(textOf(scout)).not.toContain("bytes free")
    expect(textOf(scout)).toContain("does not exist")
  } finally {
    await mcp.close()
  }
}, 60_000)

test("a read-only state dir: serve answers, and a delegation is refused as read-only before anything starts", async () => {
  const state = home.env.XDG_STATE_HOME!
  const mcp = await connectStdio(home.env, ["/usr/bin/bwrap", "--dev-bind", "/", "/", "--ro-bind", state, state, "--die-with-parent", "--", BINARY, "serve"])
  try {
    expect((await mcp.client.listTools()).tools.length).toBeGreaterThan(5)
    const scout = (await mcp.client.callTool({ name: "scout", arguments: { cwd: `${import.meta.dir}`, task: "look" } })) as CallToolResult
    expect(scout.isError).toBe(true)
    expect(textOf(scout)).toMatch(/The state dir .* cannot be written: the filesystem is read-only \(EROFS\)/)
    expect(model.stepRequests().length).toBe(0)
  } finally {
    await mcp.close()
  }
}, 60_000)
