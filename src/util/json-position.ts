// Where a JSON text stops being JSON. JSON.parse (in Bun) names what it expected but not where, and
// a person fixing config.json by hand needs the line and column.

const WHITESPACE = " \t\n\r"
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const HEX4 = /^[0-9a-fA-F]{4}$/

/** The offset of the first character that makes `text` invalid JSON (its length when it ends too soon). */
export function jsonErrorOffset(text: string): number | undefined {
  try {
    new Scanner(text).document()
    return undefined
  } catch (error) {
    if (error instanceof JsonStop) return error.offset
    // Nesting deeper than the stack: say what JSON.parse said, without a position.
    if (error instanceof RangeError) return undefined
    throw error
  }
}

class Scanner {
  private i = 0
  constructor(private readonly text: string) {}

  /** Returns when the whole text is one JSON value; throws JsonStop where it is not. */
  document() {
    this.value()
    this.skip()
    if (this.i < this.text.length) this.stop()
  }

  private stop(): never {
    throw new JsonStop(this.i)
  }

  private skip() {
    while (this.i < this.text.length && WHITESPACE.includes(this.text[this.i]!)) this.i++
  }

  private string() {
    const text = this.text
    this.i++
    while (this.i < text.length) {
      const c = text[this.i]!
      if (c === '"') {
        this.i++
        return
      }
      if (c < " ") this.stop()
      if (c !== "\\") this.i++
      else if ('"\\/bfnrt'.includes(text[this.i + 1] ?? "x")) this.i += 2
      else if (text[this.i + 1] === "u" && HEX4.test(text.slice(this.i + 2, this.i + 6))) this.i += 6
      else this.stop()
    }
    this.stop()
  }

  private members(close: string, member: () => void) {
    this.i++
    this.skip()
    if (this.text[this.i] === close) {
      this.i++
      return
    }
    for (;;) {
      member()
      this.skip()
      if (this.text[this.i] === close) {
        this.i++
        return
      }
      if (this.text[this.i] !== ",") this.stop()
      this.i++
    }
  }

  private member() {
    this.skip()
    if (this.text[this.i] !== '"') this.stop()
    this.string()
    this.skip()
    if (this.text[this.i] !== ":") this.stop()
    this.i++
    this.value()
  }

  private value() {
    this.skip()
    const c = this.text[this.i]
    if (c === "{") this.members("}", () => this.member())
    else if (c === "[") this.members("]", () => this.value())
    else if (c === '"') this.string()
    else this.literal()
  }

  private literal() {
    const word = ["true", "false", "null"].find((w) => this.text.startsWith(w, this.i))
    NUMBER.lastIndex = this.i
    if (word) this.i += word.length
    else if (this.text[this.i] !== undefined && NUMBER.test(this.text)) this.i = NUMBER.lastIndex
    else this.stop()
  }
}

class JsonStop {
  constructor(readonly offset: number) {}
}

/** 1-based line and column of `offset` in `text`. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset)
  return { line: before.split("\n").length, column: offset - before.lastIndexOf("\n") }
}

/** " at line L, column C" for the first error in `text`, or "" when it cannot be placed. */
export function jsonErrorPlace(text: string): string {
  const offset = jsonErrorOffset(text)
  if (offset === undefined) return ""
  const { line, column } = lineColumn(text, offset)
  return ` at line ${line}, column ${column}`
}
