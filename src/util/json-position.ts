// Where a JSON text stops being JSON. JSON.parse (in Bun) names what it expected but not where, and
// a person fixing config.json by hand needs the line and column.
import { scanJson } from "./json-scan"

/**
 * The offset of the first character that makes `text` invalid JSON (its length when it ends too soon).
 * The scan is iterative (json-scan.ts): a file nested past the stack is placed like any other.
 */
export function jsonErrorOffset(text: string): number | undefined {
  const scan = scanJson(text)
  if (!scan.ok) return scan.at
  let end = scan.end
  while (end < text.length && " \t\n\r".includes(text[end]!)) end++
  return end < text.length ? end : undefined
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
