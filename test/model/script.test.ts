import { expect, test } from "bun:test"
import { AppError } from "../../src/errors"
import { builtinScripts, callsOf, parseScript, parseScriptFile } from "../../src/model/script"

test("the embedded demo script greps, reads, then reports what it read", () => {
  const demo = builtinScripts().demo!
  const steps = demo.turns[0]!.steps
  expect(steps.flatMap(callsOf).map((c) => c.tool)).toEqual(["grep", "read"])
  expect(steps.at(-1)).toMatchObject({ text: expect.stringContaining("{{lastToolOutput}}") })
  expect(demo.turns.length).toBeGreaterThan(1)
})

test("step kinds, defaults and failures parse", () => {
  const script = parseScript({
    turns: [
      {
        steps: [
          { tool: "glob", fail: { kind: "429", retryAfterSeconds: 1 } },
          {
            tools: [
              { tool: "read", args: { filePath: "a" } },
              { tool: "grep", args: { pattern: "x" } },
            ],
            delayMs: 5,
          },
          { text: "done", fail: { kind: "cut", times: "always" } },
        ],
      },
    ],
  })
  const [one, two, three] = script.turns[0]!.steps
  expect(one).toEqual({ tool: "glob", args: {}, fail: { kind: "429", times: 1, retryAfterSeconds: 1, per: "session" } })
  expect(callsOf(two!).map((c) => c.tool)).toEqual(["read", "grep"])
  expect(three?.fail?.times).toBe("always")
})

test("a file holds one script (registered under the fallback name) or named scripts", () => {
  const single = parseScriptFile(JSON.stringify({ turns: [{ steps: [{ text: "hi" }] }] }), "one.json", "mine")
  expect(Object.keys(single)).toEqual(["mine"])
  const named = parseScriptFile(
    JSON.stringify({
      scripts: { a: { turns: [{ steps: [{ text: "a" }] }] }, b: { turns: [{ steps: [{ text: "b" }] }] } },
    }),
    "set.json",
  )
  expect(Object.keys(named)).toEqual(["a", "b"])
})

test("a bad file is a usage error that names the step and the field", () => {
  const attempt = (text: string) => {
    try {
      parseScriptFile(text, "bad.json")
    } catch (error) {
      return error
    }
  }
  const bad = attempt(
    JSON.stringify({ turns: [{ steps: [{ tool: "read" }, { txt: "x" }, { text: "t", fail: { kind: "404" } }] }] }),
  )
  expect(bad).toBeInstanceOf(AppError)
  expect((bad as AppError).kind).toBe("Usage")
  expect((bad as AppError).message).toContain("turns.0.steps.1")
  expect((bad as AppError).message).toContain('"txt"')
  expect((bad as AppError).message).toContain("turns.0.steps.2.fail.kind")
  expect((attempt("{nope") as AppError).message).toContain("not JSON")
})
