// The scripted model's Anthropic Messages API, the face Claude Code talks to: a Messages request is
// read as the chat request the scripts know (tool results become tool messages), and the reply is
// streamed as Messages SSE events that a client joins the way it joins Anthropic's.
import { describe, expect, test } from "bun:test"
import { toChatRequest, type MessagesRequest } from "../../src/model/anthropic"
import { events as sse, readUntilDropped, scriptedFace } from "./_faces"

const model = scriptedFace()

const tools = [{ name: "mcp__orch__scout", description: "d", input_schema: { type: "object" } }]
const post = (body: Record<string, unknown>, session: string = crypto.randomUUID(), path = "/v1/messages") =>
  fetch(`${model.origin}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "x-claude-code-session-id": session,
    },
    body: JSON.stringify({
      model: "fast",
      max_tokens: 1024,
      stream: true,
      tools,
      system: [{ type: "text", text: "You are Claude Code." }],
      ...body,
    }),
  })
const ask = (text: string, more: unknown[] = []) => ({
  messages: [{ role: "user", content: [{ type: "text", text }] }, ...more],
})

interface Event {
  type: string
  index?: number
  message?: { id: string; role: string; usage: { input_tokens: number } }
  content_block?: { type: string; id?: string; name?: string; text?: string }
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string }
  usage?: { output_tokens: number }
}

const events = (response: Response) => sse<Event>(response)
const joined = (list: Event[], kind: "text" | "partial_json") =>
  list.map((e) => (kind === "text" ? e.delta?.text : e.delta?.partial_json) ?? "").join("")

describe("toChatRequest", () => {
  test("system blocks, tool_use and tool_result become the chat messages the scripts read", () => {
    const request: MessagesRequest = {
      model: "fast",
      system: [
        { type: "text", text: "You are " },
        { type: "text", text: "Claude Code." },
      ],
      messages: [
        { role: "user", content: "go [script:scout]" },
        { role: "system", content: [{ type: "text", text: "# Environment" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hm" },
            { type: "tool_use", id: "call_1", name: "mcp__orch__scout", input: { task: "look" } },
          ],
        },
        // Claude Code puts reminder text beside the results: it must not open a new turn.
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: [{ type: "text", text: '{"status":"succeeded"}' }] },
            { type: "text", text: "<system-reminder>x</system-reminder>" },
          ],
        },
      ],
      tools: [{ name: "mcp__orch__scout" }],
    }
    expect(toChatRequest(request)).toEqual({
      model: "fast",
      stream: undefined,
      messages: [
        { role: "system", content: "You are Claude Code." },
        { role: "user", content: "go [script:scout]" },
        { role: "system", content: "# Environment" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "mcp__orch__scout", arguments: '{"task":"look"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"status":"succeeded"}' },
      ],
      tools: [{ type: "function", function: { name: "mcp__orch__scout" } }],
    })
  })
})

describe("POST /v1/messages", () => {
  test("a tool step streams message_start, a tool_use block whose partial JSON joins to the arguments, and stop_reason tool_use", async () => {
    const response = await post(ask("Ask the scout. [script:scout]"))
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const list = await events(response)
    expect(list.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ])
    expect(list[0]!.message).toMatchObject({ role: "assistant", usage: { input_tokens: expect.any(Number) } })
    expect(list[1]!.content_block).toMatchObject({ type: "tool_use", name: "mcp__orch__scout" })
    expect(list[1]!.content_block?.id).toStartWith("call_")
    expect(JSON.parse(joined(list, "partial_json"))).toEqual({ cwd: "/repo", task: "look" })
    expect(list.at(-2)).toMatchObject({
      delta: { stop_reason: "tool_use" },
      usage: { output_tokens: expect.any(Number) },
    })
  })

  test("the tool_result of the next request fills the text step, and is recorded with its tool's name", async () => {
    const session = crypto.randomUUID()
    const first = await events(await post(ask("Ask the scout. [script:scout]"), session))
    const id = first[1]!.content_block!.id!
    const history = [
      {
        role: "assistant",
        content: [{ type: "tool_use", id, name: "mcp__orch__scout", input: { cwd: "/repo", task: "look" } }],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: id, content: [{ type: "text", text: "the report" }] }],
      },
    ]
    const second = await events(await post(ask("Ask the scout. [script:scout]", history), session))
    expect(second.map((e) => e.type)).toContain("content_block_start")
    expect(second[1]!.content_block).toEqual({ type: "text", text: "" })
    expect(joined(second, "text")).toBe("Scout said: the report")
    expect(second.at(-2)?.delta?.stop_reason).toBe("end_turn")
    const recorded = model.requests.at(-1)!
    expect(recorded).toMatchObject({
      api: "messages",
      sessionId: session,
      play: { kind: "step", script: "scout", step: 1 },
    })
    expect(model.toolResults()).toContainEqual({
      callId: id,
      tool: "mcp__orch__scout",
      args: '{"cwd":"/repo","task":"look"}',
      output: "the report",
    })
  })

  test("a non-streaming request gets one message body", async () => {
    const body = (await (await post({ ...ask("[script:scout]"), stream: false })).json()) as Record<string, unknown>
    expect(body).toMatchObject({
      type: "message",
      role: "assistant",
      stop_reason: "tool_use",
      content: [{ type: "tool_use", name: "mcp__orch__scout", input: { cwd: "/repo", task: "look" } }],
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    })
    expect(String(body.id)).toStartWith("msg_")
  })

  test("an injected 429 is worded as Anthropic words it, with retry-after, and the retry succeeds", async () => {
    const first = await post(ask("[script:limited]"), "a-429")
    expect(first.status).toBe(429)
    expect(first.headers.get("retry-after")).toBe("2")
    expect(await first.json()).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "Rate limit reached (scripted)." },
    })
    expect(joined(await events(await post(ask("[script:limited]"), "a-429")), "text")).toBe("after a wait")
  })

  test("a cut stream drops the connection after part of the text, before message_stop; the retry is whole", async () => {
    const { received, error } = await readUntilDropped(await post(ask("[script:cut]"), "a-cut"))
    expect(error).toBeDefined()
    expect(received).toContain('"text":"the w"')
    expect(received).not.toContain("message_stop")
    expect(joined(await events(await post(ask("[script:cut]"), "a-cut")), "text")).toBe("the whole answer")
  })

  test("count_tokens answers a count; a body that is not a Messages request is a 400 invalid_request_error", async () => {
    const counted = (await (await post(ask("hello"), undefined, "/v1/messages/count_tokens")).json()) as {
      input_tokens: number
    }
    expect(counted.input_tokens).toBeGreaterThan(0)
    const bad = await fetch(`${model.origin}/v1/messages`, { method: "POST", body: "{}" })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } })
  })
})
