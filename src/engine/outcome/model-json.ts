// The one parser of JSON a model wrote (DESIGN decision 16): a final answer's JSON value extracted
// and checked against the parent's `output_schema` (the reviewer's verdict is such an answer, with
// review.ts's schema). Bounded in size, linear in the text (one pass over its lines for a fence, one
// iterative scan of the value: no backtracking regex over the answer, no parse tried at every "{"),
// bounded in depth before JSON.parse or the validator see it, and the validator's words capped. Pure
// and synchronous: it runs in a worker with a time budget (output-check.ts), because a schema's own
// `pattern` can backtrack on a string the model chose, and only a thread that can be stopped bounds that.
import { Ajv, type ValidateFunction } from "ajv"
import addFormats from "ajv-formats"
import { scanJson } from "../../util/json-scan"

/**
 * Bounds on a model's answer: its characters (a structured answer is data for the parent, and 1 MiB
 * of it is far past any use), the nesting of its value (JSON.stringify and the validator recurse on it,
 * and Bun's stack ends near 10,000 levels), and how many of the validator's errors are quoted.
 */
export const MODEL_JSON_LIMITS = { maxChars: 1_048_576, maxDepth: 64, quotedErrors: 20 } as const

export type OutputSchema = Record<string, unknown>

/** What the final answer gave: the parsed value matching the schema, or why not (the validator's words). */
export type OutputCheck = { ok: true; value: unknown } | { ok: false; message: string }

/** The validator: never coerces types, fills defaults or removes properties; unknown keywords are errors. */
export const newAjv = () =>
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

export function compileSchema(schema: OutputSchema): ValidateFunction {
  return newAjv().compile(schema)
}

// Fence lines, tested one line at a time (anchored, no quantifier that can trade characters with another).
const OPENING_FENCE = /^```[ \t]*(?:json)?[ \t]*\r?$/i
const CLOSING_FENCE = /^```[ \t]*\r?$/

/** A fenced block's content (offsets into the text) and where its closing line ends. */
interface Fence {
  from: number
  to: number
  end: number
}

/**
 * The ```json (or bare ```) blocks of `text`, paired in one pass over its lines: an opening line, then
 * content up to the first closing line. Linear: each line is looked at once. Pure.
 */
function fencesOf(text: string): Fence[] {
  const fences: Fence[] = []
  let open: number | undefined
  for (let start = 0; start <= text.length; ) {
    const newline = text.indexOf("\n", start)
    const end = newline === -1 ? text.length : newline
    const line = text.slice(start, end)
    if (open === undefined) {
      if (line.startsWith("```") && OPENING_FENCE.test(line)) open = newline === -1 ? end : end + 1
    } else if (line.startsWith("```") && CLOSING_FENCE.test(line)) {
      // The content ends before the newline that precedes the closing line (and its "\r").
      const to = Math.max(open, start - (text[start - 2] === "\r" ? 2 : 1))
      fences.push({ from: open, to, end })
      open = undefined
    }
    if (newline === -1) break
    start = newline + 1
  }
  return fences
}

/** The refusal of an answer over the size bound, known from its length alone; undefined within it. Pure. */
export function overSize(text: string): OutputCheck | undefined {
  const { maxChars } = MODEL_JSON_LIMITS
  if (text.length <= maxChars) return undefined
  return {
    ok: false,
    message: `the answer has ${text.length} characters, over the limit of ${maxChars} for a JSON answer.`,
  }
}

/** The text's one JSON value, scanned before it is parsed; `started` says the text was JSON up to a rule. */
function parse(text: string): OutputCheck & { started?: true } {
  const scan = scanJson(text, { exact: true, maxDepth: MODEL_JSON_LIMITS.maxDepth })
  if (!scan.ok) {
    if (scan.problem !== "syntax") return { ok: false, message: scan.message, started: true }
    return { ok: false, message: `${scan.message} at offset ${scan.at}.` }
  }
  if (scan.end !== text.length) return { ok: false, message: `text follows the JSON value at offset ${scan.end}.` }
  // Valid, exact and shallow: JSON.parse reads it as written.
  return { ok: true, value: JSON.parse(text) }
}

/**
 * The one JSON value the answer ends with: the whole text, or a single fenced block that ends it (prose
 * before it allowed). Anything else (JSON inside prose, two fences, text after the fence) is no value. Pure.
 */
export function extractJson(text: string): OutputCheck {
  const oversize = overSize(text)
  if (oversize) return oversize
  const whole = text.trim()
  if (!whole) return { ok: false, message: "the answer is empty; no JSON value found." }
  const direct = parse(whole)
  if (direct.ok) return direct
  if (direct.started) return { ok: false, message: direct.message }
  const fences = fencesOf(whole)
  if (fences.length === 0)
    return { ok: false, message: "no JSON value found: the answer is neither JSON alone nor a ```json fenced block." }
  if (fences.length > 1)
    return { ok: false, message: `found ${fences.length} fenced blocks; end with exactly one JSON value.` }
  const [fence] = fences
  if (fence!.end !== whole.length)
    return { ok: false, message: "text follows the ```json fenced block; the JSON value must end the answer." }
  const inner = parse(whole.slice(fence!.from, fence!.to).trim())
  if (inner.ok) return inner
  return { ok: false, message: inner.started ? inner.message : `the fenced block is not valid JSON: ${inner.message}` }
}

/**
 * The answer's JSON value checked against the schema: the value as parsed, or the validator's message
 * (its first MODEL_JSON_LIMITS.quotedErrors errors, then how many more). Pure, and as slow as the
 * schema makes it: callers on the request loop use output-check.ts, which runs this in a worker.
 */
export function checkAnswer(schema: OutputSchema, text: string): OutputCheck {
  const extracted = extractJson(text)
  if (!extracted.ok) return extracted
  let validate: ValidateFunction
  try {
    validate = compileSchema(schema)
  } catch (error) {
    // A record's schema is checked when the task starts; one that no longer compiles judges nothing as valid.
    return { ok: false, message: `the task's output_schema cannot be compiled: ${(error as Error).message}` }
  }
  if (validate(extracted.value)) return extracted
  const errors = validate.errors ?? []
  const quoted = errors.slice(0, MODEL_JSON_LIMITS.quotedErrors)
  const more = errors.length > quoted.length ? ` (and ${errors.length - quoted.length} more errors)` : ""
  return {
    ok: false,
    message: `the JSON value does not match: ${newAjv().errorsText(quoted, { dataVar: "output" })}${more}.`,
  }
}
