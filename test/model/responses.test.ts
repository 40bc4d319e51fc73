// The scripted model's OpenAI Responses API, the face Codex talks to: a Responses request is read as
// the chat request the scripts know (function_call_output items become tool messages, a namespace's
// tools are `NAMESPACE__TOOL`), and the reply is streamed as the Responses SSE events Codex parses.
import { describe, expect, test } from "bun:test"
import { toChatRequestFromResponses, type ResponsesRequest } from "../../src/model/responses"
import { events as sse, readUntilDropped, scriptedFace } from "./_faces"

const model = scriptedFace({ plain: { turns: [{ steps: [{ tool: "shell", args: { command: ["ls"] } }] }] } })

const tools = [
  { type: "function", name: "shell", parameters: { type: "object" } },
  {
    type: "namespace",
    name: "mcp__orch",
    description: "ours",
    tools: [{ name: "scout", description: "d", parameters: { type: "object" } }],
  },
]
const post = (body: Record<string, unknown>, session: string = crypto.randomUUID()) =>
  fetch(`${model.url}/responses`, {
    method: "POST",
    headers: { "content-type": "application/json", session_id: session },
    body: JSON.stringify({ model: "fast", stream: true, tools, instructions: "You are Codex.", ...body }),
  })
const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] })
const ask = (text: string, more: unknown[] = []) => ({ input: [user(text), ...more] })

interface Event {
  type: string
  output_index?: number
  delta?: string
  item?: {
    type: string
    id?: string
    name?: string
    namespace?: string
    call_id?: string
    arguments?: string
    content?: Array<{ text: string }>
  }
  response?: {
    id: string
    status: string
    usage?: { input_tokens: number; output_tokens: number; total_tokens: number }
  }
}

const events = (response: Response) => sse<Event>(response)
const done = (list: Event[]) => list.filter((e) => e.type === "response.output_item.done").map((e) => e.item!)

describe("toChatRequestFromResponses", () => {
  test("instructions, developer messages, function calls and their outputs become the chat messages the scripts read", () => {
    const request: ResponsesRequest = {
      model: "fast",
      instructions: "You are Codex.",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "<permissions>" }] },
        user("<environment_context/>"),
        user("go [script:scout]"),
        { type: "reasoning", summary: [] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Asking." }] },
        {
          type: "function_call",
          call_id: "call_1",
          name: "scout",
          namespace: "mcp__orch",
          arguments: '{"task":"look"}',
        },
        { type: "function_call", call_id: "call_2", name: "shell", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: '{"status":"succeeded"}' },
        { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "listed" }] },
      ],
      tools,
    }
    expect(toChatRequestFromResponses(request)).toEqual({
      model: "fast",
      stream: undefined,
      messages: [
        { role: "system", content: "You are Codex." },
        { role: "system", content: "<permissions>" },
        { role: "user", content: "<environment_context/>" },
        { role: "user", content: "go [script:scout]" },
        {
          role: "assistant",
          content: "Asking.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "mcp__orch__scout", arguments: '{"task":"look"}' } },
            { id: "call_2", type: "function", function: { name: "shell", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"status":"succeeded"}' },
        { role: "tool", tool_call_id: "call_2", content: "listed" },
      ],
      tools: [
        { type: "function", function: { name: "shell" } },
        { type: "function", function: { name: "mcp__orch__scout" } },
      ],
    })
  })
})

describe("POST /v1/responses", () => {
  test("a namespaced tool step streams created, the call added and done as {namespace, name}, and completed with usage", async () => {
    const list = await events(await post(ask("Ask the scout. [script:scout]")))
    expect(list.map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
    ])
    const [call] = done(list)
    expect(call).toMatchObject({ type: "function_call", namespace: "mcp__orch", name: "scout" })
    expect(call?.call_id).toStartWith("call_")
    expect(JSON.parse(call!.arguments!)).toEqual({ cwd: "/repo", task: "look" })
    expect(list.at(-1)?.response).toMatchObject({
      id: list[0]!.response!.id,
      status: "completed",
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    })
  })

  test("control: a tool outside every namespace goes out by its plain name", async () => {
    const [call] = done(await events(await post(ask("[script:plain]"))))
    expect(call).toMatchObject({ type: "function_call", name: "shell" })
    expect(call?.namespace).toBeUndefined()
  })

  test("the function_call_output of the next request fills the text step, and is recorded with its tool's name", async () => {
    const session = crypto.randomUUID()
    const [call] = done(await events(await post(ask("Ask the scout. [script:scout]"), session)))
    const history = [
      {
        type: "function_call",
        call_id: call!.call_id,
        name: "scout",
        namespace: "mcp__orch",
        arguments: call!.arguments,
      },
      { type: "function_call_output", call_id: call!.call_id, output: "the report" },
    ]
    const second = await events(await post(ask("Ask the scout. [script:scout]", history), session))
    expect(second.map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_item.done",
      "response.completed",
    ])
    expect(
      second
        .filter((e) => e.type === "response.output_text.delta")
        .map((e) => e.delta)
        .join(""),
    ).toBe("Scout said: the report")
    expect(done(second)[0]).toMatchObject({
      type: "message",
      role: "assistant",
      content: [{ text: "Scout said: the report" }],
    })
    expect(model.requests.at(-1)).toMatchObject({
      api: "responses",
      sessionId: session,
      play: { kind: "step", script: "scout", step: 1 },
    })
    expect(model.toolResults()).toContainEqual({
      callId: call!.call_id!,
      tool: "mcp__orch__scout",
      args: '{"cwd":"/repo","task":"look"}',
      output: "the report",
    })
  })

  test("a non-streaming request gets one response body", async () => {
    const body = (await (await post({ ...ask("[script:scout]"), stream: false })).json()) as Record<string, unknown>
    expect(body).toMatchObject({
      object: "response",
      status: "completed",
      output: [{ type: "function_call", name: "scout", namespace: "mcp__orch" }],
    })
    expect(String(body.id)).toStartWith("resp_")
  })

  test("an injected 429 keeps its retry-after and the retry succeeds; a cut stream ends before response.completed", async () => {
    const first = await post(ask("[script:limited]"), "r-429")
    expect(first.status).toBe(429)
    expect(first.headers.get("retry-after")).toBe("2")
    expect(await first.json()).toMatchObject({ error: { type: "rate_limit_exceeded" } })
    expect(done(await events(await post(ask("[script:limited]"), "r-429")))[0]?.content?.[0]?.text).toBe("after a wait")
    const { received, error } = await readUntilDropped(await post(ask("[script:cut]"), "r-cut"))
    expect(error).toBeDefined()
    expect(received).toContain('"delta":"the w"')
    expect(received).not.toContain("response.completed")
  })

  test("a body that is not a Responses request is a 400 invalid_request_error naming the API", async () => {
    const bad = await fetch(`${model.url}/responses`, { method: "POST", body: "{}" })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({
      error: { type: "invalid_request_error", message: "invalid responses request" },
    })
  })
})
