// Structured output: the parent's `output_schema` (a JSON Schema), the instruction appended to the brief,
// and the agent's final answer extracted and validated against it. Pure: the turn asks again once on a
// mismatch (turn.ts), settle attaches the value or the validator's message (settle.ts). The value is
// the agent's JSON exactly as parsed: ajv never coerces types, fills defaults or removes properties here.
import { Ajv, type ValidateFunction } from "ajv"
import addFormats from "ajv-formats"
import { fail } from "../errors"
import { inexactJson } from "./json-exact"
import type { DelegationResult } from "./result"
import retry from "./output-retry.md" with { type: "text" }
import instruction from "./output-schema.md" with { type: "text" }

/** Bounds on the schema the parent passes: serialised bytes and nesting depth (objects and arrays). */
export const OUTPUT_SCHEMA_LIMITS = { maxBytes: 8192, maxDepth: 8 } as const

export type OutputSchema = Record<string, unknown>

/** What the final answer gave: the parsed value matching the schema, or why not (the validator's words). */
export type OutputCheck = { ok: true; value: unknown } | { ok: false; message: string }

// An unknown keyword or format is an error at compile time, not silently ignored at validation time.
const newAjv = () =>
  addFormats(
    new Ajv({
      allErrors: true,
      strict: false,
      strictSchema: true,
      validateFormats: true,
      coerceTypes: false,
      useDefaults: false,
      removeAdditional: false,
    }),
  )

/** How deep a JSON value nests: a scalar is 0, `{}` and `[]` are 1. Pure. */
export function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0
  const children = Array.isArray(value) ? value : Object.values(value)
  return 1 + children.reduce<number>((deepest, child) => Math.max(deepest, depthOf(child)), 0)
}

function compile(schema: OutputSchema): ValidateFunction {
  return newAjv().compile(schema)
}

/** Refuses an `output_schema` the product will not use, saying what is wrong; undefined passes. Pure. */
export function checkOutputSchema(schema: unknown): asserts schema is OutputSchema | undefined {
  if (schema === undefined) return
  const { maxBytes, maxDepth } = OUTPUT_SCHEMA_LIMITS
  const next = `Pass a JSON Schema object of at most ${maxBytes} bytes and ${maxDepth} levels, e.g. {"type":"object"}.`
  if (schema === null || typeof schema !== "object" || Array.isArray(schema))
    throw fail("Usage", `output_schema must be a JSON Schema object, got ${kindOf(schema)}.`, next)
  // Depth first: a deep value is refused without serialising it.
  const depth = depthOf(schema)
  if (depth > maxDepth) throw fail("Usage", `output_schema nests ${depth} levels, over the limit of ${maxDepth}.`, next)
  const bytes = Buffer.byteLength(JSON.stringify(schema))
  if (bytes > maxBytes)
    throw fail("Usage", `output_schema is ${bytes} bytes serialised, over the limit of ${maxBytes}.`, next)
  try {
    compile(schema as OutputSchema)
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    throw fail("Usage", `output_schema is not a schema the validator accepts: ${why}`, next)
  }
}

const kindOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "an array" : typeof value)

// A fenced block: ```json or a bare ``` fence, on lines of their own.
const FENCE = /^```[ \t]*(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n```[ \t]*$/gim

/**
 * The one JSON value the answer ends with: the whole text, or a single fenced block that ends it (prose
 * before it allowed). Anything else (JSON inside prose, two fences, text after the fence) is no value. Pure.
 */
export function extractJson(text: string): OutputCheck {
  const whole = text.trim()
  if (!whole) return { ok: false, message: "the answer is empty; no JSON value found." }
  const direct = parse(whole)
  if (direct.ok) return direct
  if (direct.parsed) return { ok: false, message: direct.message }
  const fences = [...whole.matchAll(FENCE)]
  if (fences.length === 0)
    return { ok: false, message: "no JSON value found: the answer is neither JSON alone nor a ```json fenced block." }
  if (fences.length > 1)
    return { ok: false, message: `found ${fences.length} fenced blocks; end with exactly one JSON value.` }
  const [fence] = fences
  if (fence!.index! + fence![0].length !== whole.length)
    return { ok: false, message: "text follows the ```json fenced block; the JSON value must end the answer." }
  const inner = parse(fence![1]!.trim())
  if (inner.ok) return inner
  return { ok: false, message: inner.parsed ? inner.message : `the fenced block is not valid JSON: ${inner.message}` }
}

/** The text's JSON value; `parsed` says a refusal is the exactness check's, not a syntax error. */
function parse(text: string): OutputCheck & { parsed?: true } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) }
  }
  const inexact = inexactJson(text)
  return inexact ? { ok: false, message: inexact, parsed: true } : { ok: true, value }
}

/** The answer's JSON value checked against the schema: the value as parsed, or the validator's message. Pure. */
export function checkOutput(schema: OutputSchema, text: string): OutputCheck {
  const extracted = extractJson(text)
  if (!extracted.ok) return extracted
  let validate: ValidateFunction
  try {
    validate = compile(schema)
  } catch (error) {
    // A record's schema is checked when the task starts; one that no longer compiles judges nothing as valid.
    return { ok: false, message: `the task's output_schema cannot be compiled: ${(error as Error).message}` }
  }
  if (validate(extracted.value)) return extracted
  const ajv = newAjv()
  return {
    ok: false,
    message: `the JSON value does not match: ${ajv.errorsText(validate.errors, { dataVar: "output" })}.`,
  }
}

/** The brief with the instruction to end with one JSON value matching `schema`. Pure. */
export function withOutputSchema(brief: string, schema: OutputSchema | undefined): string {
  if (!schema) return brief
  return `${brief}\n\n${instruction.trim().replace("{{schema}}", () => JSON.stringify(schema, null, 2))}`
}

/** The one follow-up a mismatching answer gets, quoting the validator. Pure. */
function outputRetry(message: string): string {
  return retry.trim().replace("{{message}}", () => message)
}

/** The follow-up a turn sends once when its final answer does not match (turn.ts), else nothing. Pure. */
export function outputFollowUp(schema: OutputSchema, text: string): { line: string; text: string } | undefined {
  const checked = checkOutput(schema, text)
  if (checked.ok) return undefined
  return { line: "the final answer does not match output_schema; asking once more", text: outputRetry(checked.message) }
}

/** How much of a mismatching answer the parent gets back, labelled unverified (the kept session has it all). */
const UNVERIFIED_MAX_CHARS = 16_000

/** What the parent receives: `output` (the parsed value) or `output_error` with the raw text, unverified. */
export type OutputOutcome = { output: unknown } | { error: { message: string; unverified: string } }

/** The final answer judged against the schema. Pure. */
export function judgeOutput(schema: OutputSchema, text: string): OutputOutcome {
  const checked = checkOutput(schema, text)
  if (checked.ok) return { output: checked.value }
  const unverified =
    text.length > UNVERIFIED_MAX_CHARS
      ? `${text.slice(0, UNVERIFIED_MAX_CHARS)}\n[cut: the session has the rest]`
      : text
  return { error: { message: checked.message, unverified } }
}

/** Attaches the judgement to the result; a mismatch ends the turn needs_review, never a coerced value. Pure. */
export function applyOutput(result: DelegationResult, outcome: OutputOutcome): void {
  if ("output" in outcome) {
    result.output = outcome.output
    return
  }
  result.outputError = outcome.error
  if (result.status === "succeeded") result.status = "needs_review"
  const reason = `The final answer did not match output_schema (asked once more): ${outcome.error.message}`
  result.warnings = [reason, ...(result.warnings ?? [])]
  result.next ??=
    "output_error.unverified is the agent's raw text, not validated: read it, or task_continue asking for the JSON."
}
