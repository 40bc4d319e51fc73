// The text the secret guard reads, as a person would read it: compatibility forms folded (NFKC:
// fullwidth letters, ligatures, non-breaking spaces), invisible characters dropped (zero-width
// spaces and joiners, bidi controls, soft hyphens, variation selectors), and string escapes undone
// (`\n`, `\"`, `\u003d`, `\x41`: a service-account JSON or a PEM pasted from a string literal). Each
// character of the view remembers where it came from, so a finding is reported at its place in the
// text the parent wrote.

export interface TextView {
  text: string
  /**
   * For each UTF-16 index of `text` (and one past its end), the index in the original it came from; empty when nothing
   * changed.
   */
  origin: number[]
}

// Format characters (Cf: U+200B…U+200F, U+2060…, U+FEFF, U+00AD, bidi controls, tags), nonspacing
// marks (Mn: they take no width, so a combining mark inside a token is as invisible as a zero-width
// space) and the invisible fillers outside both.
const FORMAT = /^[\p{Cf}\p{Mn}]$/u
const INVISIBLE_RANGES: [number, number][] = [
  [0x034f, 0x034f],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xffa0, 0xffa0],
  [0xe0100, 0xe01ef],
]
const invisible = (codePoint: number, char: string) =>
  FORMAT.test(char) || INVISIBLE_RANGES.some(([low, high]) => codePoint >= low && codePoint <= high)
const HEX = /^[0-9A-Fa-f]+$/
const MAX_FOLD = 4
const ESCAPED: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "'": "'", "/": "/", "`": "`" }

/** The view of `text` the guard matches against; identity positions where nothing changed. */
export function normalise(text: string): TextView {
  // Plain ASCII without a backslash reads as written.
  if (!/[\\\u0080-\uffff]/.test(text)) return { text, origin: [] }
  let out = ""
  const origin: number[] = []
  const emit = (chunk: string, from: number) => {
    out += chunk
    for (let k = 0; k < chunk.length; k++) origin.push(from)
  }
  // Briefs repeat their characters: each is looked up once.
  const seen = new Map<number, string>()
  const emitCodePoint = (codePoint: number, from: number) => {
    if (codePoint < 0x80) return emit(String.fromCharCode(codePoint), from)
    let shown = seen.get(codePoint)
    if (shown === undefined) {
      const char = String.fromCodePoint(codePoint)
      // A fold that grows a character past a few (U+FDFA is 18) is no token's: kept as it is, so a
      // brief of them cannot blow the view up eighteenfold.
      const folded = char.normalize("NFKC")
      shown = invisible(codePoint, char) ? "" : folded.length <= MAX_FOLD ? folded : char
      if (seen.size < 65_536) seen.set(codePoint, shown)
    }
    if (shown) emit(shown, from)
  }
  let i = 0
  while (i < text.length) {
    const code = text.charCodeAt(i)
    if (code === 0x5c) {
      // A run of backslashes before an escape letter is one escape, however often it was escaped.
      let j = i
      while (text.charCodeAt(j) === 0x5c) j++
      const next = text[j]
      if (next !== undefined && next in ESCAPED) {
        emit(ESCAPED[next]!, i)
        i = j + 1
        continue
      }
      const hex = next === "u" ? 4 : next === "x" ? 2 : 0
      if (hex && HEX.test(text.slice(j + 1, j + 1 + hex)) && text.slice(j + 1, j + 1 + hex).length === hex) {
        emitCodePoint(Number.parseInt(text.slice(j + 1, j + 1 + hex), 16), i)
        i = j + 1 + hex
        continue
      }
      for (; i < j; i++) emit("\\", i)
      continue
    }
    const codePoint = text.codePointAt(i)!
    emitCodePoint(codePoint, i)
    i += codePoint > 0xffff ? 2 : 1
  }
  origin.push(text.length)
  return { text: out, origin }
}
