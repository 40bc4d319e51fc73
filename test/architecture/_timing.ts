// Finds where a test bounds an elapsed time from above by a constant, on the source with its strings,
// templates, regular expressions and comments blanked (_swallows.ts), so a planted example in a string
// is not itself a finding.
import { lex } from "./_swallows"

/** The text of the balanced parentheses that open at `open`, and the index after them. */
function inside(code: string, open: number): { text: string; end: number } | undefined {
  let depth = 0
  for (let at = open; at < code.length; at++) {
    if (code[at] === "(") depth++
    else if (code[at] === ")" && --depth === 0) return { text: code.slice(open + 1, at), end: at + 1 }
  }
  return undefined
}

const CLOCK_DIFFERENCE = /\b(?:performance|Date)\.now\(\)\s*-/
const TIME_NAME = /\b\w*(?:elapsed|took|duration|silence)\w*\b/i
/** A number, a CONSTANT_NAME, or arithmetic of them. */
const CONSTANT = /^[\d_.\sA-Z+\-*/()]*[\dA-Z][\d_.\sA-Z+\-*/()]*$/

/** The 1-based lines where `expect(...)` bounds an elapsed time from above by a constant. */
export function elapsedBounds(source: string): number[] {
  const { code } = lex(source)
  const fromClock = new Set(
    [...code.matchAll(/\b(\w+)\s*=\s*[^;\n=]*\b(?:performance|Date)\.now\(\)\s*-/g)].map((match) => match[1]!),
  )
  const elapsed = (text: string) =>
    CLOCK_DIFFERENCE.test(text) ||
    TIME_NAME.test(text) ||
    [...text.matchAll(/\b\w+\b/g)].some(([word]) => fromClock.has(word))
  const constant = (text: string) => CONSTANT.test(text.trim().replace(/,$/, ""))
  const found: number[] = []
  for (const match of code.matchAll(/\bexpect\(/g)) {
    const subject = inside(code, match.index! + "expect".length)
    if (!subject) continue
    const matcher = /^\s*\.\s*(toBeLessThan|toBeLessThanOrEqual|toBeGreaterThan|toBeGreaterThanOrEqual)\s*\(/.exec(
      code.slice(subject.end),
    )
    if (!matcher) continue
    const bound = inside(code, subject.end + matcher[0].length - 1)
    if (!bound) continue
    const upper = matcher[1]!.startsWith("toBeLess")
      ? elapsed(subject.text) && constant(bound.text)
      : constant(subject.text) && elapsed(bound.text)
    if (upper) found.push(code.slice(0, match.index).split("\n").length)
  }
  return found
}
