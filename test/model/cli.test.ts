// `scripted-model` as a process: first stdout line is the base URL, it serves the file's script,
// and SIGTERM stops it.
import { afterAll, expect, test } from "bun:test"
import { resolve } from "node:path"
import { spawn, type Spawned } from "../../src/util/process"
import { tempDir } from "../helpers/temp"

const MAIN = resolve(import.meta.dir, "../../src/cli/main.ts")
const started: Spawned[] = []

afterAll(async () => {
  for (const proc of started) await proc.kill()
})

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let text = ""
  while (!text.includes("\n")) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  reader.releaseLock()
  return text.split("\n")[0] ?? ""
}

test("serves the script file, prints the base URL first, and stops on SIGTERM", async () => {
  await using dir = await tempDir("scripted-cli-")
  await Bun.write(`${dir.path}/script.json`, JSON.stringify({ turns: [{ steps: [{ text: "from the file" }] }] }))
  const proc = spawn([process.execPath, MAIN, "scripted-model", "--script", `${dir.path}/script.json`])
  started.push(proc)
  const url = await firstLine(proc.stdout)
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)

  const response = await fetch(`${url}/chat/completions`, {
    method: "POST",
    body: JSON.stringify({
      model: "fast",
      stream: false,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "read" } }],
    }),
  })
  const body = (await response.json()) as { choices: { message: { content: string } }[] }
  expect(body.choices[0]?.message.content).toBe("from the file")

  await proc.kill()
  expect(await proc.exited).toBe(0)
}, 30_000)

test("a malformed script file is a usage error (exit 2) naming the problem", async () => {
  await using dir = await tempDir("scripted-cli-")
  await Bun.write(`${dir.path}/bad.json`, JSON.stringify({ turns: [{ steps: [{ txt: "typo" }] }] }))
  const proc = spawn([process.execPath, MAIN, "scripted-model", "--script", `${dir.path}/bad.json`])
  started.push(proc)
  expect(await proc.exited).toBe(2)
  expect(await new Response(proc.stderr).text()).toContain("turns.0.steps.0")
}, 30_000)
