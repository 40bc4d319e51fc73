import { afterAll, beforeAll, expect, test } from "bun:test"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"

let model: ScriptedModel

beforeAll(async () => {
  model = await startScriptedModel({
    scripts: {
      pair: {
        turns: [
          {
            steps: [
              {
                tools: [
                  { tool: "read", args: { filePath: "a.txt" } },
                  { tool: "grep", args: { pattern: "x" } },
                ],
              },
              { text: "read: {{lastToolOutput}}" },
            ],
          },
        ],
      },
      limited: { turns: [{ steps: [{ text: "after a wait", fail: { kind: "429", retryAfterSeconds: 2 } }] }] },
      broken: { turns: [{ steps: [{ text: "never", fail: { kind: "500", times: "always" } }] }] },
      cut: { turns: [{ steps: [{ text: "the whole answer", fail: { kind: "cut" } }] }] },
      slow: { turns: [{ steps: [{ text: "late", delayMs: 400 }] }] },
      held: { turns: [{ steps: [{ text: "never sent", delayMs: 3_600_000 }] }] },
      thinking: {
        turns: [
          {
            steps: [
              { tool: "read", args: { filePath: "a.txt" }, reasoning: "look at a.txt first" },
              { text: "done", reasoning: "enough" },
            ],
          },
        ],
      },
    },
  })
})
afterAll(() => model.stop())

const tools = [{ type: "function", function: { name: "read", parameters: {} } }]
const post = (body: Record<string, unknown>, session: string = crypto.randomUUID()) =>
  fetch(`${model.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-session-id": session },
    body: JSON.stringify({ model: "fast", stream: true, stream_options: { include_usage: true }, tools, ...body }),
  })
const ask = (text: string, more: unknown[] = []) => ({
  messages: [{ role: "system", content: "sys" }, { role: "user", content: text }, ...more],
})

interface ToolDelta {
  index: number
  id?: string
  type?: string
  function: { name?: string; arguments: string }
}
interface Chunk {
  choices: {
    delta: { role?: string; content?: string; reasoning_content?: string; tool_calls?: ToolDelta[] }
    finish_reason: string | null
  }[]
  usage?: { prompt_tokens: number; completion_tokens: number }
}

const toolDeltas = (chunks: Chunk[]) =>
  chunks.flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? []))
const textOf = (chunks: Chunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")

/** The `data:` payloads of an SSE body, parsed, and whether it ended with [DONE]. */
async function events(response: Response) {
  const lines = (await response.text()).split("\n").filter((line) => line.startsWith("data: "))
  const payloads = lines.map((line) => line.slice(6))
  const done = payloads.at(-1) === "[DONE]"
  return { done, chunks: payloads.filter((p) => p !== "[DONE]").map((p) => JSON.parse(p) as Chunk) }
}

test("GET /v1/models lists the served model ids", async () => {
  const body = (await (await fetch(`${model.url}/models`)).json()) as { data: { id: string }[] }
  expect(body.data.map((m) => m.id)).toEqual(["fast", "second"])
})

test("a tool step streams OpenAI tool-call deltas, finish_reason tool_calls, usage, then [DONE]", async () => {
  const response = await post(ask("go"))
  expect(response.headers.get("content-type")).toBe("text/event-stream")
  const { done, chunks } = await events(response)
  expect(done).toBe(true)
  expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant")
  const deltas = toolDeltas(chunks)
  expect(deltas[0]).toMatchObject({ index: 0, type: "function", function: { name: "grep" } })
  expect(deltas[0]?.id).toStartWith("call_")
  const args = deltas.map((d) => d.function.arguments).join("")
  expect(JSON.parse(args)).toEqual({ pattern: "TODO" })
  expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("tool_calls")
  expect(chunks.at(-1)).toMatchObject({
    choices: [],
    usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) },
  })
})

test("parallel calls share one step; the next request's tool results feed the text", async () => {
  const first = await events(await post(ask("[script:pair]")))
  const calls = toolDeltas(first.chunks)
  const ids = calls.filter((c) => c.id).map((c) => c.id)
  expect(calls.filter((c) => c.id).map((c) => c.index)).toEqual([0, 1])
  const history = [
    {
      role: "assistant",
      content: "",
      tool_calls: ids.map((id, i) => ({
        id,
        type: "function",
        function: { name: i ? "grep" : "read", arguments: "{}" },
      })),
    },
    { role: "tool", tool_call_id: ids[0], content: "contents of a.txt" },
    { role: "tool", tool_call_id: ids[1], content: "no match" },
  ]
  const second = await events(await post(ask("[script:pair]", history)))
  expect(textOf(second.chunks)).toBe("read: contents of a.txt\n\nno match")
  expect(second.chunks.at(-2)?.choices[0]?.finish_reason).toBe("stop")
  expect(model.toolResults().map((r) => [r.tool, r.output])).toContainEqual(["read", "contents of a.txt"])
})

test("a step's reasoning streams as reasoning_content deltas before its tool calls; the session comes from x-opencode-session too", async () => {
  const response = await fetch(`${model.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-opencode-session": "ses_thinking" },
    body: JSON.stringify({ model: "fast", stream: true, tools, ...ask("[script:thinking]") }),
  })
  const { chunks } = await events(response)
  const kinds = chunks
    .slice(1)
    .map((c) =>
      c.choices[0]?.delta.reasoning_content !== undefined
        ? "reasoning"
        : c.choices[0]?.delta.tool_calls
          ? "call"
          : "end",
    )
  expect(kinds).toEqual(["reasoning", "reasoning", "call", "call", "end"])
  expect(chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? "").join("")).toBe("look at a.txt first")
  expect(toolDeltas(chunks)[0]?.id).toStartWith("call_ses_thinking_")
  expect(model.requests.at(-1)?.sessionId).toBe("ses_thinking")

  const body = (await (await post({ ...ask("[script:thinking]"), stream: false })).json()) as {
    choices: { message: Record<string, unknown> }[]
  }
  expect(body.choices[0]?.message).toMatchObject({
    reasoning_content: "look at a.txt first",
    tool_calls: [{ function: { name: "read" } }],
  })
  // A step without reasoning sends none.
  expect(JSON.stringify((await events(await post(ask("go")))).chunks)).not.toContain("reasoning_content")
})

test("non-streaming requests get one chat.completion body", async () => {
  const body = (await (await post({ ...ask("go"), stream: false })).json()) as { object: string; choices: unknown[] }
  expect(body.object).toBe("chat.completion")
  expect(body.choices[0]).toMatchObject({
    finish_reason: "tool_calls",
    message: { role: "assistant", tool_calls: [{ type: "function", function: { name: "grep" } }] },
  })
})

test("a 429 once carries retry-after, and the retry of the same step succeeds", async () => {
  const first = await post(ask("[script:limited]"), "s-429")
  expect(first.status).toBe(429)
  expect(first.headers.get("retry-after")).toBe("2")
  expect(((await first.json()) as { error: { message: string } }).error.message).toContain("Rate limit")
  const retry = await events(await post(ask("[script:limited]"), "s-429"))
  expect(textOf(retry.chunks)).toBe("after a wait")
  // Another session meets the failure afresh.
  expect((await post(ask("[script:limited]"), "other")).status).toBe(429)
})

test("an 'always' 500 fails every attempt", async () => {
  for (let attempt = 0; attempt < 3; attempt++) expect((await post(ask("[script:broken]"), "s-500")).status).toBe(500)
  expect(model.requests.filter((r) => r.failed === "500").length).toBeGreaterThanOrEqual(3)
})

test("a cut stream drops the connection after part of the answer, without [DONE]; the retry is whole", async () => {
  const response = await post(ask("[script:cut]"), "s-cut")
  expect(response.status).toBe(200)
  const decoder = new TextDecoder()
  let received = ""
  const error = await (async () => {
    try {
      for await (const piece of response.body!) received += decoder.decode(piece)
    } catch (caught) {
      return caught
    }
  })()
  expect(error).toBeDefined()
  expect(received).toContain('"content":"the w"')
  expect(received).not.toContain("[DONE]")
  const retry = await events(await post(ask("[script:cut]"), "s-cut"))
  expect(retry.done).toBe(true)
})

test("with a delay the first chunk arrives at once and the rest later", async () => {
  // An hour's delay: the first chunk can only have come before it, and the rest is still held back.
  const held = (await post(ask("[script:held]"))).body!.getReader()
  const opening = new TextDecoder().decode((await held.read()).value)
  expect(opening).not.toContain("never sent")
  await held.cancel()
  const reader = (await post(ask("[script:slow]"))).body!.getReader()
  const first = new TextDecoder().decode((await reader.read()).value)
  let rest = ""
  for (let part = await reader.read(); !part.done; part = await reader.read())
    rest += new TextDecoder().decode(part.value)
  expect(first).not.toContain('"content":"la"')
  expect(rest).toContain('"content":"la"')
  expect(rest).toContain("[DONE]")
})

test("the title request gets a short title and is not counted as a step", async () => {
  const before = model.stepRequests().length
  const title = {
    tools: undefined,
    messages: [
      { role: "system", content: "You are a title generator." },
      { role: "user", content: "Generate a title for this conversation:\n" },
      { role: "user", content: '"fix the parser bug [script:pair]"' },
    ],
  }
  const { chunks } = await events(await post(title))
  expect(textOf(chunks)).toBe("fix the parser bug")
  expect(model.stepRequests().length).toBe(before)
  expect(model.requests.at(-1)?.play.kind).toBe("title")
})

test("setScript registers a script at run time; a malformed body is a 400", async () => {
  model.setScript("late", { turns: [{ steps: [{ text: "added later" }] }] })
  const { chunks } = await events(await post(ask("[script:late]")))
  expect(textOf(chunks)).toBe("added later")
  expect((await fetch(`${model.url}/chat/completions`, { method: "POST", body: "{}" })).status).toBe(400)
})
