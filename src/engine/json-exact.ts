// What JSON.parse changes silently in an agent's answer: a key given twice keeps the last value, and a
// number beyond a double's precision comes back as another number. Either would make `output` differ from
// what the agent wrote, so a structured answer with one is refused (output-schema.ts), never "fixed". Pure.

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y
// A double keeps every 15-digit decimal exactly; integers are exact up to 2^53.
const EXACT_DIGITS = 15

/** Why `text` (valid JSON) would not parse to exactly what it says, or undefined. Pure. */
export function inexactJson(text: string): string | undefined {
  let at = 0
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at++
  }
  const string = (): string => {
    const start = at++
    while (text[at] !== '"') at += text[at] === "\\" ? 2 : 1
    at++
    return JSON.parse(text.slice(start, at)) as string
  }
  const number = (): string | undefined => {
    NUMBER.lastIndex = at
    const token = NUMBER.exec(text)![0]
    at += token.length
    const [mantissa = ""] = token.replace("-", "").split(/[eE]/)
    const digits = mantissa.replace(".", "").replace(/^0+/, "").replace(/0+$/, "")
    const integer = !/[.eE]/.test(token)
    if (integer ? Number.isSafeInteger(Number(token)) : digits.length <= EXACT_DIGITS) return undefined
    return `the number ${token} cannot be read back exactly (send it as a string if the schema allows).`
  }
  const value = (): string | undefined => {
    space()
    const opening = text[at]
    if (opening === '"') return void string()
    if (opening === "{" || opening === "[") {
      const closing = opening === "{" ? "}" : "]"
      const keys = new Set<string>()
      at++
      space()
      if (text[at] === closing) return void at++
      for (;;) {
        if (opening === "{") {
          space()
          const key = string()
          if (keys.has(key)) return `the key "${key}" appears twice in one object.`
          keys.add(key)
          space()
          at++ // the colon
        }
        const problem = value()
        if (problem) return problem
        space()
        if (text[at++] === closing) return undefined
      }
    }
    if (opening === "-" || (opening !== undefined && opening >= "0" && opening <= "9")) return number()
    at += text.startsWith("null", at) || text.startsWith("true", at) ? 4 : 5
    return undefined
  }
  try {
    return value()
  } catch {
    // Only a stack too deep for this reader gets here: JSON.parse accepted the text.
    return "the JSON value nests too deeply to be checked."
  }
}
