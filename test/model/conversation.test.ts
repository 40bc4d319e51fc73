import { describe, expect, test } from "bun:test"
import {
  fillArguments,
  isTitleRequest,
  positionOf,
  scriptMarker,
  templateValues,
  toolResultsOf,
  type ChatRequest,
  type Message,
} from "../../src/model/conversation"
import { decide } from "../../src/model/play"
import { builtinScripts, parseScript } from "../../src/model/script"

const tools = [{ type: "function", function: { name: "read" } }]
const request = (messages: Message[], withTools = true): ChatRequest => ({
  model: "fast",
  messages,
  ...(withTools && { tools }),
})
const system: Message = { role: "system", content: "You are opencode." }
const user = (text: string): Message => ({ role: "user", content: text })
const call = (id: string, name = "read"): Message => ({
  role: "assistant",
  content: "",
  tool_calls: [{ id, function: { name, arguments: "{}" } }],
})
const result = (id: string, output: string): Message => ({ role: "tool", tool_call_id: id, content: output })
const maxSteps: Message = { role: "assistant", content: "CRITICAL - MAXIMUM STEPS REACHED\n\nRespond with text only." }

describe("positionOf", () => {
  const cases: [string, Message[], { turn: number; step: number; maxSteps: boolean }][] = [
    ["first request", [system, user("go")], { turn: 0, step: 0, maxSteps: false }],
    ["after one tool call", [system, user("go"), call("a"), result("a", "x")], { turn: 0, step: 1, maxSteps: false }],
    [
      "after parallel calls (one assistant message, two results)",
      [
        system,
        user("go"),
        { role: "assistant", content: "", tool_calls: [...call("a").tool_calls!, ...call("b").tool_calls!] },
        result("a", "x"),
        result("b", "y"),
      ],
      { turn: 0, step: 1, maxSteps: false },
    ],
    [
      "the empty assistant message a cut stream leaves does not count",
      [
        system,
        user("go"),
        call("a"),
        result("a", "x"),
        { role: "assistant", content: "" },
        call("b"),
        result("b", "y"),
      ],
      { turn: 0, step: 2, maxSteps: false },
    ],
    [
      "second user turn starts over",
      [system, user("go"), call("a"), result("a", "x"), { role: "assistant", content: "done" }, user("more")],
      { turn: 1, step: 0, maxSteps: false },
    ],
    [
      "consecutive user messages are one turn",
      [system, user("go"), { role: "user", content: [{ type: "text", text: "also" }] }],
      { turn: 0, step: 0, maxSteps: false },
    ],
    [
      "OpenCode's max-steps message is not a step",
      [system, user("go"), call("a"), result("a", "x"), maxSteps],
      { turn: 0, step: 1, maxSteps: true },
    ],
  ]
  for (const [name, messages, expected] of cases)
    test(name, () => expect(positionOf(request(messages))).toEqual(expected))
})

test("the title generator's request is recognised, a tool-less step request is not", () => {
  const title = request(
    [
      { role: "system", content: "You are a title generator. You output ONLY a thread title." },
      user("Generate a title for this conversation:\n"),
      user('"fix it"'),
    ],
    false,
  )
  expect(isTitleRequest(title)).toBe(true)
  expect(isTitleRequest(request([system, user("go")], false))).toBe(false)
  expect(isTitleRequest(request([system, user("go")]))).toBe(false)
})

test("the script marker is read from the system prompt or a user message", () => {
  expect(scriptMarker(request([system, user("go [script:two-step]")]))).toBe("two-step")
  expect(scriptMarker(request([{ role: "system", content: "agent prompt [script:sys]" }, user("go")]))).toBe("sys")
  expect(scriptMarker(request([system, user("go")]))).toBeUndefined()
})

test("tool results carry the name of the call that produced them", () => {
  const messages = [system, user("go"), call("a", "grep"), result("a", "found"), call("b"), result("b", "read it")]
  expect(toolResultsOf(messages).map((r) => [r.tool, r.output])).toEqual([
    ["grep", "found"],
    ["read", "read it"],
  ])
  expect(templateValues(request(messages))).toEqual({
    lastToolOutput: "read it",
    lastTaskId: "",
    toolOutputs: "found\n\nread it",
    userMessage: "go",
  })
})

test("a delegation's task id fills a later call's string arguments, and the JSON stays well formed", () => {
  const running = '{"task_id":"task_mx6fol28_3918f588","status":"running"}'
  const values = templateValues(request([system, user("go"), call("a", "scout"), result("a", running)]))
  expect(values.lastTaskId).toBe("task_mx6fol28_3918f588")
  const args = { task_id: "{{lastTaskId}}", wait_seconds: 2, notes: ["{{lastToolOutput}}"], nested: { keep: "{{x}}" } }
  const filled = fillArguments(args, values)
  expect(filled).toEqual({
    task_id: "task_mx6fol28_3918f588",
    wait_seconds: 2,
    notes: [running],
    nested: { keep: "{{x}}" },
  })
  // Quotes in a filled value are escaped by the JSON the call is sent as, not spliced into it.
  expect(JSON.parse(JSON.stringify(filled))).toEqual(filled)
  // Control: with no delegation before it, the placeholder names no task.
  expect(templateValues(request([system, user("go")])).lastTaskId).toBe("")
})

describe("decide", () => {
  const scripts = new Map(Object.entries(builtinScripts()))
  scripts.set(
    "short",
    parseScript({
      turns: [
        {
          steps: [
            { tool: "read", args: { filePath: "a" } },
            { tool: "read", args: {} },
            { text: "saw {{lastToolOutput}}" },
          ],
        },
      ],
    }),
  )

  test("plays the step after the answered ones, with call ids unique per session", () => {
    const play = decide(
      scripts,
      "demo",
      request([system, user("go [script:short]"), call("a"), result("a", "x")]),
      "s1",
    )
    expect(play.kind === "step" && play.reply.calls).toEqual([{ id: "call_s1_0_1_0", name: "read", arguments: "{}" }])
  })

  test("on the last allowed step it jumps to the turn's text", () => {
    const play = decide(
      scripts,
      "demo",
      request([system, user("go [script:short]"), call("a"), result("a", "42"), maxSteps]),
    )
    expect(play).toMatchObject({ kind: "step", step: 2, maxSteps: true, reply: { text: "saw 42", calls: [] } })
  })

  test("an unknown script or a step past the end answers with text that says so", () => {
    expect(decide(scripts, "demo", request([system, user("[script:nope]")])).reply.text).toContain(
      'no script named "nope"',
    )
    const past = decide(
      scripts,
      "demo",
      request([
        system,
        user("x"),
        user("y"),
        { role: "assistant", content: "ok" },
        user("z"),
        user("w"),
        { role: "assistant", content: "ok" },
        user("again"),
      ]),
    )
    expect(past).toMatchObject({ kind: "missing", turn: 2 })
    expect(past.reply.text).toContain("has no turn 3")
  })
})
