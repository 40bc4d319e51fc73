// Structured output: the parent's `output_schema` (a JSON Schema), the instruction appended to the brief,
// and the agent's final answer extracted and validated against it by model-json.ts, off the request loop
// (output-check.ts). The turn asks again once on a mismatch (turn.ts), settle attaches the value or the
// validator's message (settle.ts). The value is the agent's JSON exactly as parsed: ajv never coerces
// types, fills defaults or removes properties here.
import { fail } from "../../errors"
import { checkOutput } from "./output-check"
import { compileSchema, type OutputSchema } from "./model-json"
import type { DelegationResult } from "../records"
import retry from "./output-retry.md" with { type: "text" }
import instruction from "./output-schema.md" with { type: "text" }

export { extractJson, type OutputCheck, type OutputSchema } from "./model-json"
export { checkOutput } from "./output-check"

/** Bounds on the schema the parent passes: serialised bytes and nesting depth (objects and arrays). */
export const OUTPUT_SCHEMA_LIMITS = { maxBytes: 8192, maxDepth: 8 } as const

/**
 * How deep a JSON value nests: a scalar is 0, `{}` and `[]` are 1. Pure, and iterative: the value is
 * the parent's, already parsed, and may nest past the stack.
 */
export function depthOf(value: unknown): number {
  let deepest = 0
  const pending: [unknown, number][] = [[value, 0]]
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next
    if (item === null || typeof item !== "object") continue
    deepest = Math.max(deepest, depth + 1)
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1])
  }
  return deepest
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
    compileSchema(schema as OutputSchema)
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    throw fail("Usage", `output_schema is not a schema the validator accepts: ${why}`, next)
  }
}

const kindOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "an array" : typeof value)

/** The brief with the instruction to end with one JSON value matching `schema`. Pure. */
export function withOutputSchema(brief: string, schema: OutputSchema | undefined): string {
  if (!schema) return brief
  return `${brief}\n\n${instruction.trim().replace("{{schema}}", () => JSON.stringify(schema, null, 2))}`
}

/** The one follow-up a mismatching answer gets, quoting the validator. Pure. */
function outputRetry(message: string): string {
  return retry.trim().replace("{{message}}", () => message)
}

/** The follow-up a turn sends once when its final answer does not match (turn.ts), else nothing. */
export async function outputFollowUp(
  schema: OutputSchema,
  text: string,
): Promise<{ line: string; text: string } | undefined> {
  const checked = await checkOutput(schema, text)
  if (checked.ok) return undefined
  return { line: "the final answer does not match output_schema; asking once more", text: outputRetry(checked.message) }
}

/** How much of a mismatching answer the parent gets back, labelled unverified (the kept session has it all). */
const UNVERIFIED_MAX_CHARS = 16_000

/** What the parent receives: `output` (the parsed value) or `output_error` with the raw text, unverified. */
export type OutputOutcome = { output: unknown } | { error: { message: string; unverified: string } }

/** The final answer judged against the schema, off the request loop. */
export async function judgeOutput(schema: OutputSchema, text: string): Promise<OutputOutcome> {
  const checked = await checkOutput(schema, text)
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
