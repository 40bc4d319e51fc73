// Structured output's pure core: which schemas are refused (not an object, too deep, too big, not a
// schema the validator accepts), what final answers yield a value (JSON alone, or one ```json fence ending
// the answer) and which do not (JSON inside prose, two fences, text after the fence), and that validation
// never coerces: a string "1" is not an integer, a missing property is not filled from a default.
import { describe, expect, test } from "bun:test"
import { Ajv } from "ajv"
import {
  applyOutput,
  checkOutput,
  checkOutputSchema,
  depthOf,
  extractJson,
  judgeOutput,
  OUTPUT_SCHEMA_LIMITS,
  outputFollowUp,
  withOutputSchema,
} from "../../src/engine/outcome/output-schema"
import { fromTranscript } from "../../src/engine/outcome/result"

const nested = (levels: number): Record<string, unknown> =>
  levels <= 1 ? { type: "string" } : { type: "array", items: nested(levels - 1) }
const COUNT = {
  type: "object",
  properties: { count: { type: "integer", default: 7 }, name: { type: "string" } },
  required: ["count"],
  additionalProperties: false,
}

describe("checkOutputSchema", () => {
  test.each([
    ["a small object schema", { type: "object" }, undefined],
    ["absent", undefined, undefined],
    ["formats are known", { type: "string", format: "email" }, undefined],
    ["eight levels", nested(OUTPUT_SCHEMA_LIMITS.maxDepth), undefined],
    ["an array", [{ type: "object" }], "must be a JSON Schema object, got an array"],
    ["true", true, "got boolean"],
    ["null", null, "got null"],
    ["a string", "{}", "got string"],
    ["nine levels", nested(OUTPUT_SCHEMA_LIMITS.maxDepth + 1), "nests 9 levels, over the limit of 8"],
    ["over 8 KB", { type: "string", description: "x".repeat(8200) }, "over the limit of 8192"],
    ["an unknown type", { type: "objekt" }, "not a schema the validator accepts"],
    ["an unknown keyword", { type: "object", requird: ["a"] }, 'unknown keyword: "requird"'],
    ["an unknown format", { type: "string", format: "colour" }, "not a schema the validator accepts"],
  ])("%s", (_, schema, problem) => {
    if (!problem) return expect(() => checkOutputSchema(schema)).not.toThrow()
    expect(() => checkOutputSchema(schema)).toThrow(problem)
    try {
      checkOutputSchema(schema)
    } catch (error) {
      expect((error as { hint?: string }).hint).toContain("Pass a JSON Schema object")
    }
  })

  test("depth counts objects and arrays, not scalars", () => {
    expect([depthOf(1), depthOf({}), depthOf([[]]), depthOf({ a: { b: [1] } })]).toEqual([0, 1, 2, 3])
  })
})

describe("extractJson", () => {
  test.each([
    ["JSON alone", '{"a":1}', { a: 1 }],
    ["JSON alone with whitespace", "\n  [1, 2]  \n", [1, 2]],
    ["a scalar", "42", 42],
    ["a json fence after prose", 'Here it is:\n\n```json\n{"a":1}\n```', { a: 1 }],
    ["a bare fence", '```\n{"a":1}\n```\n', { a: 1 }],
    ["the same key in sibling objects", '[{"a":1},{"a":2}]', [{ a: 1 }, { a: 2 }]],
    [
      "exact numbers",
      '[9007199254740991, -0.5, 1e300, 1.50, 0.000123456789012345, "9007199254740993"]',
      [9007199254740991, -0.5, 1e300, 1.5, 0.000123456789012345, "9007199254740993"],
    ],
    [
      "escapes and literals",
      '{"a\\"b":"}{\\u0022","t":true,"f":false,"n":null,"e":[],"o":{}}',
      {
        'a"b': '}{"',
        t: true,
        f: false,
        n: null,
        e: [],
        o: {},
      },
    ],
  ])("accepts %s", (_, text, value) => {
    expect(extractJson(text)).toEqual({ ok: true, value })
  })

  test.each([
    ["empty", "  ", "empty"],
    ["JSON inside prose", 'The answer is {"a":1} as asked.', "no JSON value found"],
    ["two fences", '```json\n{"a":1}\n```\nand\n```json\n{"a":2}\n```', "found 2 fenced blocks"],
    ["text after the fence", '```json\n{"a":1}\n```\nHope that helps.', "text follows"],
    ["a fence that is not JSON", "```json\n{a: 1}\n```", "the fenced block is not valid JSON"],
    ["a key twice (JSON.parse keeps the last)", '{"count":1,"count":2}', 'the key "count" appears twice'],
    ["a nested key twice", '{"a":[{"b":1,"c":{"d":1,"d":1}}]}', 'the key "d" appears twice'],
    ["an integer beyond 2^53", '{"id":9007199254740993}', "9007199254740993 cannot be read back exactly"],
    ["a decimal beyond a double", "```json\n[0.12345678901234567]\n```", "0.12345678901234567 cannot be read back"],
  ])("refuses %s", (_, text, problem) => {
    const got = extractJson(text)
    expect(got.ok).toBe(false)
    if (!got.ok) expect(got.message).toContain(problem)
  })

  test("an answer nested past any reader's stack is refused, not thrown", () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`
    expect(extractJson(deep).ok).toBe(false)
  })

  test("control: JSON.parse alone silently keeps the last key and rounds the integer", () => {
    expect(JSON.parse('{"count":1,"count":2}')).toEqual({ count: 2 })
    expect(String(JSON.parse("9007199254740993"))).toBe("9007199254740992")
  })
})

describe("checkOutput never coerces", () => {
  test.each([
    ['{"count":3}', { count: 3 }, undefined],
    ['{"count":"3"}', undefined, "output/count must be integer"],
    ['{"name":"x"}', undefined, "must have required property 'count'"],
    ['{"count":3,"extra":true}', undefined, "must NOT have additional properties"],
    ["[3]", undefined, "output must be object"],
  ])("%s", async (text, value, problem) => {
    const got = await checkOutput(COUNT, text)
    if (!problem) return expect(got).toEqual({ ok: true, value })
    expect(got.ok).toBe(false)
    if (!got.ok) expect(got.message).toContain(problem)
  })

  test("control: a coercing validator would have accepted the string, so the refusal above is the product's", () => {
    const lenient = new Ajv({ coerceTypes: true, useDefaults: true })
    const value: Record<string, unknown> = { count: "3" }
    expect(lenient.validate(COUNT, value)).toBe(true)
    expect(value.count).toBe(3)
  })

  test("a default in the schema is not filled in, and the parsed value is returned as the agent wrote it", async () => {
    const got = await checkOutput({ type: "object", properties: { n: { type: "integer", default: 7 } } }, "{}")
    expect(got).toEqual({ ok: true, value: {} })
  })
})

describe("the turn and the result", () => {
  test("a mismatch gets one follow-up quoting the validator; a match gets none", async () => {
    expect(await outputFollowUp(COUNT, '{"count":3}')).toBeUndefined()
    expect((await outputFollowUp(COUNT, '{"count":"3"}'))?.text).toContain("output/count must be integer")
  })

  test("the brief gets the schema appended; without one it is unchanged", () => {
    expect(withOutputSchema("do it", undefined)).toBe("do it")
    const brief = withOutputSchema("do it", COUNT)
    expect(brief.startsWith("do it\n\n")).toBe(true)
    expect(brief).toContain('"required": [\n    "count"\n  ]')
  })

  const base = () => fromTranscript({ role: "scout", workspace: "/w", durationMs: 1, status: "succeeded" })

  test("a match sets output and keeps the status; a mismatch sets output_error, unverified, needs_review", async () => {
    const good = base()
    applyOutput(good, await judgeOutput(COUNT, '{"count":3}'))
    expect([good.output, good.outputError, good.status]).toEqual([{ count: 3 }, undefined, "succeeded"])

    const bad = base()
    applyOutput(bad, await judgeOutput(COUNT, 'count: "3"'))
    expect(bad.output).toBeUndefined()
    expect(bad.outputError?.unverified).toBe('count: "3"')
    expect(bad.outputError?.message).toContain("no JSON value found")
    expect(bad.status).toBe("needs_review")
    expect(bad.warnings?.[0]).toContain("did not match output_schema")
  })

  test("a schema that no longer compiles (a garbage record) judges nothing valid, without throwing", async () => {
    const got = await judgeOutput({ type: "objekt" }, "{}")
    expect("error" in got && got.error.message).toContain("cannot be compiled")
  })
})
