// What a verification prints is confined output: its host copy (the run's log under the state dir) is
// bounded, its head and tail kept and the cut said, and the reader that digests it holds a bounded part
// of any one line. Through the real OpenCode on the scripted model, with the verify run by the server
// after the worker's session: 1 GB of output, and one line of 200 MB. Control: a verification that
// prints a little is kept whole, with no cut said (the bound is what cuts, not the path).
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import { readdir, readFile, stat } from "node:fs/promises"
import { VERIFY_LOG_BYTES } from "../../src/engine/outcome/verify"
import { eachLine, LINE_MAX_CHARS } from "../../src/runner/logs"
import { serveInProcess } from "../helpers/in-process"
import { battery, makeRepo, structuredOf, textOf } from "./_world"

const { world } = battery({ idle: { turns: [{ steps: [{ text: "Nothing to change." }] }] } })
// A client of its own: a gigabyte through the sandbox may take longer than the SDK's default 60 s request.
let served: Awaited<ReturnType<typeof serveInProcess>>
beforeAll(async () => {
  served = await serveInProcess(world.runtime, "verify-output-tests")
})
afterAll(async () => served?.close())

/** The log of the verification the task ran (its run record names the task). */
async function verifyLog(taskID: string): Promise<string> {
  const runsDir = world.home.paths.runsDir
  for (const name of await readdir(runsDir)) {
    const record = JSON.parse(await readFile(`${runsDir}/${name}/run.json`, "utf8")) as { sessionID: string }
    if (record.sessionID === `verify:${taskID}`) return `${runsDir}/${name}/output.log`
  }
  throw new Error(`no verification log for ${taskID}`)
}

/** The bytes at the end of a file, read without reading the rest. */
async function tailOf(file: string, bytes: number): Promise<string> {
  const size = (await stat(file)).size
  return Bun.file(file)
    .slice(Math.max(0, size - bytes))
    .text()
}

const worker = async (verify: string) => {
  const cwd = await makeRepo(world)
  const arguments_ = { cwd, task: "[script:idle] check", verify }
  const result = (await served.client.callTool(
    { name: "worker", arguments: arguments_ },
    {
      timeout: 280_000,
    },
  )) as CallToolResult
  if (result.isError) throw new Error(textOf(result))
  return structuredOf(result)
}
const digestOf = (out: Record<string, unknown>) => (out.verification as { digest: string }).digest

describe("a verification's host copy", () => {
  test("control: a verification that prints a little is kept whole, with no cut said", async () => {
    const out = await worker("seq 1 1000")
    const log = await verifyLog(String(out.task_id))
    const text = await readFile(log, "utf8")
    expect(text).toBe(`${Array.from({ length: 1000 }, (_, i) => i + 1).join("\n")}\n`)
    expect(digestOf(out)).not.toContain("log cut")
  }, 280_000)

  test("1 GB of output: the log keeps its head and tail within the bound and says how much was cut", async () => {
    const out = await worker("yes | head -c 1G; echo '(fail) math > adds [0.1ms]'")
    const digest = digestOf(out)
    expect(digest).toContain("log cut: kept 16.0 MB of 1024.0 MB (its head and tail)")
    const log = await verifyLog(String(out.task_id))
    const size = (await stat(log)).size
    expect(size).toBeLessThanOrEqual(VERIFY_LOG_BYTES + 200)
    expect(await Bun.file(log).slice(0, 4).text()).toBe("y\ny\n")
    const tail = await tailOf(log, 1_048_576 + 200)
    expect(tail).toMatch(/\[log cut: \d+ bytes cut here; the first \d+ and the last \d+ kept\]/)
    // The end is what matters most in a test run, and it is there, and digested.
    expect(tail.endsWith("(fail) math > adds [0.1ms]\n")).toBe(true)
    expect(digest).toContain("math > adds")
  }, 300_000)

  test("one line of 200 MB: the log is bounded, and reading it back holds at most the line bound", async () => {
    const out = await worker("head -c 200M /dev/zero | tr '\\0' a; echo; echo '(fail) math > adds [0.1ms]'")
    const log = await verifyLog(String(out.task_id))
    expect((await stat(log)).size).toBeLessThanOrEqual(VERIFY_LOG_BYTES + 200)
    expect(digestOf(out)).toContain("math > adds")
    // What the reader hands on of each line, beside what the line holds on disk.
    const longest = { held: 0, chars: 0 }
    await eachLine(log, (line, _, chars) => {
      longest.held = Math.max(longest.held, line.length)
      longest.chars = Math.max(longest.chars, chars)
    })
    expect(longest.held).toBe(LINE_MAX_CHARS)
    expect(longest.chars).toBeGreaterThan(LINE_MAX_CHARS * 100)
  }, 300_000)
})
