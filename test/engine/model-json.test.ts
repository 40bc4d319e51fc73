// The one parser of a model's JSON answer on the worst answers a model could craft against it, and the
// check off the request loop. Worst inputs: fence openers that never close (the lazy fence regex it
// replaced followed each to the end: quadratic), a megabyte of "{" in prose, a hundred thousand items,
// nesting 100,000 deep. Off the loop: a schema pattern that backtracks on the answer's strings keeps the
// worker busy while the loop answers (an order of events), and is stopped at its budget. Controls: the
// old fence regex and the same check run on the loop hold the loop until they end; a deep value that a
// parser accepts crashes the serialisation that every result goes through.
import { describe, expect, test } from "bun:test"
import { checkOutput, outputChecks } from "../../src/engine/outcome/output-check"
import { checkAnswer, extractJson, MODEL_JSON_LIMITS } from "../../src/engine/outcome/model-json"

const { maxChars } = MODEL_JSON_LIMITS
const OPENERS = "```json\n".repeat(Math.floor(maxChars / 8))
const COUNT = 131_000
const ITEMS = `[${'{"a":1},'.repeat(COUNT - 1)}{"a":1}]`
const DEEP = `${"[".repeat(100_000)}${"]".repeat(100_000)}`
const FENCED_PAIRS = "```json\n1\n```\n".repeat(Math.floor(maxChars / 14))
// The extractor it replaced, kept here as the control: a lazy body between fence lines, tried at every opener.
const OLD_FENCE = /^```[ \t]*(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n```[ \t]*$/gim

describe("extractJson on the worst answers", () => {
  test.each([
    ["fence openers that never close, up to the size bound", OPENERS, "no JSON value found"],
    ["a megabyte of '{' in prose", `Result: ${"{".repeat(maxChars - 8)}`, "no JSON value found"],
    ["one character over the size bound", " ".repeat(maxChars + 1), `over the limit of ${maxChars}`],
    ["nesting 100,000 deep", DEEP, "nests deeper than 64 levels"],
    ["nesting 100,000 deep inside a fence", `Here:\n\`\`\`json\n${DEEP}\n\`\`\``, "nests deeper than 64 levels"],
    ["seventy thousand fenced blocks", FENCED_PAIRS, `found ${Math.floor(maxChars / 14)} fenced blocks`],
    ["a key twice at the end of 131,000 items", `${ITEMS.slice(0, -2)},"a":2}]`, "appears twice"],
  ])("refuses %s, saying why", (_, text, problem) => {
    const got = extractJson(text)
    expect(got.ok).toBe(false)
    if (!got.ok) expect(got.message).toContain(problem)
  })

  test("131,000 items, just under the size bound, are read", () => {
    const got = extractJson(ITEMS)
    expect(got.ok && (got.value as unknown[]).length).toBe(COUNT)
  })

  test("control: a deep value a parser accepts crashes the serialisation every result goes through", () => {
    expect(() => JSON.stringify(JSON.parse(DEEP))).toThrow("Maximum call stack size exceeded")
  }, 60_000)
})

/** The events of one check beside a reply the loop owes meanwhile (a timer stands for any other call). */
async function orderOf(check: () => Promise<unknown> | unknown): Promise<string[]> {
  const events: string[] = []
  const onStarted = () => events.push("check started")
  const onEnded = () => events.push("check ended")
  outputChecks.addEventListener("started", onStarted)
  outputChecks.addEventListener("ended", onEnded)
  try {
    const started = new Promise<void>((resolve) =>
      outputChecks.addEventListener("started", () => resolve(), { once: true }),
    )
    const done = Promise.resolve(check())
    await started
    await new Promise((resolve) => setTimeout(resolve, 0))
    events.push("reply")
    await done
    return events
  } finally {
    outputChecks.removeEventListener("started", onStarted)
    outputChecks.removeEventListener("ended", onEnded)
  }
}

/** The same work on the request loop, announced the way the worker announces it. */
function onTheLoop(work: () => unknown) {
  return () => {
    outputChecks.dispatchEvent(new Event("started"))
    const result = work()
    outputChecks.dispatchEvent(new Event("ended"))
    return result
  }
}

// JavaScriptCore gives up on a backtracking match after a second or two: a hundred of them is minutes.
const PATTERN_SCHEMA = { type: "array", items: { type: "string", pattern: "^(a+)+$" } }
const BACKTRACK = JSON.stringify(Array.from({ length: 100 }, () => `${"a".repeat(40)}!`))
const FEW = JSON.stringify(Array.from({ length: 2 }, () => `${"a".repeat(22)}!`))

describe("the check runs off the request loop", () => {
  test("the loop replies while the worker checks; an overrun is stopped and says so", async () => {
    let got: Awaited<ReturnType<typeof checkOutput>> | undefined
    const events = await orderOf(async () => {
      got = await checkOutput(PATTERN_SCHEMA, BACKTRACK, { budgetMs: 2000 })
    })
    expect(events).toEqual(["check started", "reply", "check ended"])
    expect(got?.ok).toBe(false)
    if (got && !got.ok) expect(got.message).toContain("was stopped")
  }, 30_000)

  test("control: the same check on the loop holds the reply until it ends", async () => {
    const events = await orderOf(onTheLoop(() => checkAnswer(PATTERN_SCHEMA, FEW)))
    expect(events).toEqual(["check started", "check ended", "reply"])
  }, 30_000)

  test("control: the old fence regex on the loop holds the reply until it ends", async () => {
    const openers = "```json\n".repeat(10_000)
    const events = await orderOf(onTheLoop(() => [...openers.matchAll(OLD_FENCE)].length))
    expect(events).toEqual(["check started", "check ended", "reply"])
  }, 30_000)

  test("a valid answer comes back from the worker as parsed; over the size bound it never reaches one", async () => {
    expect(await checkOutput({ type: "array" }, "[1,2]")).toEqual({ ok: true, value: [1, 2] })
    let started = false
    const onStarted = () => {
      started = true
    }
    outputChecks.addEventListener("started", onStarted)
    const over = await checkOutput({ type: "array" }, " ".repeat(maxChars + 1))
    outputChecks.removeEventListener("started", onStarted)
    expect(over.ok).toBe(false)
    expect(started).toBe(false)
  })

  test("the validator's errors are quoted up to the bound, then counted", () => {
    const got = checkAnswer({ type: "array", items: { type: "integer" } }, JSON.stringify(Array(1000).fill("x")))
    expect(got.ok).toBe(false)
    if (!got.ok) {
      expect(got.message).toContain("(and 980 more errors)")
      expect(got.message.split("must be integer")).toHaveLength(MODEL_JSON_LIMITS.quotedErrors + 1)
    }
  })
})
