// One JSON value scanned without recursion: where it ends, how deep it nests, and (when asked) what
// JSON.parse would change silently in it — a key given twice keeps the last value, a number beyond a
// double's precision comes back as another number. One pass, each character looked at a bounded
// number of times, and the open containers kept on an array: text a model wrote can nest 100,000 deep
// or run to a megabyte without costing more than its length, and a depth bound refuses it before
// JSON.parse (or anything recursive after it: JSON.stringify, a validator) ever sees it. Pure.

const WHITESPACE = " \t\n\r"
// Sticky and unambiguous (each part is entered by a distinct character): linear in the token.
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const HEX4 = /^[0-9a-fA-F]{4}$/
// A double keeps every 15-digit decimal exactly; integers are exact up to 2^53.
const EXACT_DIGITS = 15

export interface JsonScanOptions {
  /** Where the value starts (leading whitespace is skipped); 0 by default. */
  from?: number
  /** Containers (objects and arrays) open at once at most; a deeper value is refused at its opening. */
  maxDepth?: number
  /** Also refuse what JSON.parse would not read back exactly: a key twice in one object, an inexact number. */
  exact?: boolean
}

/** Why a scan stopped: not JSON at all, or JSON the caller's bounds or exactness refuse. */
export type JsonProblem = "syntax" | "depth" | "key twice" | "inexact number"

export type JsonScan =
  | { ok: true; end: number; depth: number }
  | { ok: false; at: number; problem: JsonProblem; message: string }

interface Frame {
  close: "}" | "]"
  keys?: Set<string>
}

class Stop {
  constructor(
    readonly at: number,
    readonly problem: JsonProblem,
    readonly message: string,
  ) {}
}

/** Scans one JSON value of `text`; `end` is the offset just after it (trailing text is the caller's). */
export function scanJson(text: string, options: JsonScanOptions = {}): JsonScan {
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY
  const exact = options.exact ?? false
  const stack: Frame[] = []
  let deepest = 0
  let i = options.from ?? 0

  const skip = () => {
    while (i < text.length && WHITESPACE.includes(text[i]!)) i++
  }
  const syntax = (what: string): never => {
    const found = i < text.length ? `${JSON.stringify(text[i])}` : "the end of the text"
    throw new Stop(i, "syntax", `expected ${what}, found ${found}`)
  }
  /** Past one string starting at i (a quote); its offsets, so a key can be decoded. */
  const string = (): [number, number] => {
    const start = i++
    while (i < text.length) {
      const c = text[i]!
      if (c === '"') {
        i++
        return [start, i]
      }
      if (c < " ") syntax("a character allowed in a string")
      if (c !== "\\") i++
      else if ('"\\/bfnrt'.includes(text[i + 1] ?? "x")) i += 2
      else if (text[i + 1] === "u" && HEX4.test(text.slice(i + 2, i + 6))) i += 6
      else syntax("an escape sequence")
    }
    return syntax('a closing "')
  }
  const number = () => {
    NUMBER.lastIndex = i
    const match = NUMBER.exec(text)
    if (!match) syntax("a JSON value")
    const token = match![0]
    if (exact && !exactNumber(token))
      throw new Stop(
        i,
        "inexact number",
        `the number ${token} cannot be read back exactly (send it as a string if the schema allows).`,
      )
    i += token.length
  }
  const open = (close: Frame["close"]) => {
    if (stack.length >= maxDepth)
      throw new Stop(i, "depth", `the JSON value nests deeper than ${maxDepth} levels of objects and arrays.`)
    stack.push(close === "}" && exact ? { close, keys: new Set() } : { close })
    deepest = Math.max(deepest, stack.length)
    i++
    skip()
  }
  const key = () => {
    skip()
    if (text[i] !== '"') syntax("a string key")
    const [start, end] = string()
    const keys = stack.at(-1)!.keys
    if (keys) {
      const name = JSON.parse(text.slice(start, end)) as string
      if (keys.has(name)) throw new Stop(start, "key twice", `the key "${name}" appears twice in one object.`)
      keys.add(name)
    }
    skip()
    if (text[i] !== ":") syntax('":"')
    i++
  }

  try {
    // Each turn reads one value; containers push a frame and loop back for their first member.
    value: for (;;) {
      skip()
      const c = text[i]
      if (c === "{" || c === "[") {
        open(c === "{" ? "}" : "]")
        if (text[i] === stack.at(-1)!.close) {
          stack.pop()
          i++
        } else {
          if (c === "{") key()
          continue
        }
      } else if (c === '"') string()
      else if (c === "t" && text.startsWith("true", i)) i += 4
      else if (c === "f" && text.startsWith("false", i)) i += 5
      else if (c === "n" && text.startsWith("null", i)) i += 4
      else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) number()
      else syntax("a JSON value")
      // After a value: close as many containers as end here, then a comma starts the next member.
      for (;;) {
        const frame = stack.at(-1)
        if (!frame) return { ok: true, end: i, depth: deepest }
        skip()
        if (text[i] === frame.close) {
          stack.pop()
          i++
          continue
        }
        if (text[i] !== ",") syntax(`"," or "${frame.close}"`)
        i++
        if (frame.close === "}") key()
        continue value
      }
    }
  } catch (error) {
    if (error instanceof Stop) return { ok: false, at: error.at, problem: error.problem, message: error.message }
    throw error
  }
}

/**
 * True when a JSON number token parses to exactly the number it writes. Linear in the token: the
 * significant digits are counted by index, since `/0+$/` retries every zero of a long run of them.
 */
function exactNumber(token: string): boolean {
  let end = token.length
  for (let at = 0; at < token.length; at++)
    if (token[at] === "e" || token[at] === "E") {
      end = at
      break
    }
  const integer = end === token.length && !token.includes(".")
  if (integer) return Number.isSafeInteger(Number(token))
  let first = 0
  while (first < end && (token[first] === "-" || token[first] === "0" || token[first] === ".")) first++
  let last = end - 1
  while (last >= first && (token[last] === "0" || token[last] === ".")) last--
  let digits = 0
  for (let at = first; at <= last; at++) if (token[at] !== ".") digits++
  return digits <= EXACT_DIGITS
}
