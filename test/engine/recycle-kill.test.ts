// A restart of the shared server (recycle.ts, server.ts stopServerIfRecorded) whose process is
// SIGKILLed at each of its steps, through the real OpenCode on the scripted model: a scout from
// another process afterwards succeeds every time, on the old server (a stop not yet signalled is
// undone) or a new one (a stop signalled is finished at once), and what the kill left is taken over:
// the release mark, the start lock, the record marked as stopping. Controls: the kill lands where the
// test says (what it left is checked before the scout), and a stop whose process lives is never undone.
import { beforeAll, describe, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { readdir } from "node:fs/promises"
import { RECYCLE_STEPS, type RecycleStep } from "../../src/engine/capacity/recycle"
import { Runtime } from "../../src/engine/capacity/runtime"
import { readServerRecord, type ServerRecord } from "../../src/opencode/server"
import { alive, spawn } from "../../src/util/process"
import { serveInProcess } from "../helpers/in-process"
import { makeRepo, structuredOf, textOf } from "../escape/_world"
import { serverWorld } from "./_server-world"

const CHILD = `${import.meta.dir}/_recycle-child.ts`

describe("a restart of the shared server SIGKILLed at each step", () => {
  const { world, mcp } = serverWorld(6000)

  const brief = async () => ({ cwd: await makeRepo(world), task: "[script:read_readme] go" })
  const statusOf = (result: CallToolResult) => {
    // An error result carries no structured content: its text says what failed.
    if (!result.structuredContent) return `error: ${textOf(result)}`
    return structuredOf(result).status
  }
  const scout = async () => statusOf(await mcp.call("scout", await brief()))
  /** A scout from a process that starts now (a runtime of its own, connected to no server yet). */
  async function nextProcessScout() {
    const runtime = new Runtime(world.runtime.flags)
    const served = await serveInProcess(runtime, "next-process")
    try {
      const result = await served.client.callTool(
        { name: "scout", arguments: await brief() },
        {
          timeout: 110_000,
        },
      )
      return statusOf(result as CallToolResult)
    } finally {
      await served.close()
      runtime.close()
    }
  }

  // The first delegation in a new home is slow (OpenCode installs the plugin's package once): done here.
  beforeAll(async () => {
    for (let tries = 0; tries < 3; tries++) if ((await scout().catch(() => "")) === "succeeded") return
  }, 300_000)
  const server = async () => (await readServerRecord(world.home.paths)) as ServerRecord
  const releaseMarks = async (pid: number) =>
    (await readdir(world.home.paths.instancesDir).catch(() => [] as string[])).filter((name) =>
      name.startsWith(`${"0".repeat(32)}.release.${pid}.`),
    )
  const lockText = () =>
    Bun.file(world.home.paths.serverLock)
      .text()
      .catch(() => "")

  /** A restarting process run up to `step` and SIGKILLed there; its PID. */
  async function killedAt(step: RecycleStep): Promise<number> {
    const child = spawn([process.execPath, CHILD, step], { env: world.home.env })
    const reader = child.stdout.getReader()
    let out = ""
    while (!out.includes("\n")) {
      const { value, done } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    expect(out.trim()).toBe(`at ${step}`)
    process.kill(child.pid, "SIGKILL")
    await child.exited
    return child.pid
  }

  /** What the kill at `step` left behind: the step was reached, and this is what the next process meets. */
  async function expectLeft(step: RecycleStep, pid: number, before: ServerRecord) {
    const at = RECYCLE_STEPS.indexOf(step)
    // The release mark is there until the restart ends: a dead process's, which no turn waits for.
    expect(await releaseMarks(pid)).toHaveLength(1)
    if (at >= RECYCLE_STEPS.indexOf("locked")) expect((await lockText()).split(" ")[0]).toBe(String(pid))
    const record = await readServerRecord(world.home.paths)
    if (step === "forgotten") expect(record).toBeUndefined()
    else if (at >= RECYCLE_STEPS.indexOf("marked")) expect(record?.stopping?.pid).toBe(pid)
    else expect(record?.stopping).toBeUndefined()
    if (at < RECYCLE_STEPS.indexOf("signalled")) expect(alive(before.pid)).toBe(true)
    if (at >= RECYCLE_STEPS.indexOf("stopped")) expect(alive(before.pid)).toBe(false)
  }

  for (const step of RECYCLE_STEPS)
    test(`killed after "${step}": a scout from another process succeeds, and what was left is taken over`, async () => {
      // The process's own sweep stays out of it: nothing rests for an hour.
      await Bun.write(world.home.paths.configFile, JSON.stringify({ version: 1, instanceIdleSeconds: 3600 }))
      expect(await scout()).toBe("succeeded")
      const before = await server()
      const pid = await killedAt(step)
      await expectLeft(step, pid, before)
      expect(await nextProcessScout()).toBe("succeeded")
      const after = await server()
      expect(after.stopping).toBeUndefined()
      // Not signalled yet: the same server, its stop undone. Signalled: a new one.
      if (RECYCLE_STEPS.indexOf(step) < RECYCLE_STEPS.indexOf("signalled")) expect(after.pid).toBe(before.pid)
      else expect(after.pid).not.toBe(before.pid)
      // A process connected before the restart goes on delegating too.
      expect(await scout()).toBe("succeeded")
      expect(await releaseMarks(pid)).toEqual([])
    }, 120_000)
})
