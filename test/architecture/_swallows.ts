// Finds the places a TypeScript source swallows an error, by a small lexer rather than regexes over raw
// text: strings, template literals, regular expressions and comments are blanked first (keeping every
// offset), so a `catch` in a string or a `//` in a URL neither counts nor explains.

export interface Swallow {
  /** 1-based line of the `catch`, `.catch(`, `.then(` or `finally`. */
  line: number
  form: "catch block" | ".catch()" | ".then(_, onRejected)" | "finally that returns or throws"
}

interface Lexed {
  /** The source with every string, template, regex and comment body replaced by spaces (newlines kept). */
  code: string
  /** 1-based lines that hold (part of) a comment. */
  commented: Set<number>
}

const REGEX_AFTER = new Set([..."(,=:[!&|?{};+-*%<>~^"])
const REGEX_KEYWORDS = /\b(return|typeof|case|do|else|in|of|void|yield|await|delete|throw|new)$/

export function lex(source: string): Lexed {
  const out = [...source]
  const commented = new Set<number>()
  let line = 1
  const blank = (from: number, to: number) => {
    for (let at = from; at < to; at++) if (out[at] !== "\n") out[at] = " "
  }
  // Each open template literal's brace depth, so `}` can close a `${` and resume the template.
  const templates: number[] = []
  let depth = 0
  let last = ""
  let at = 0
  const lineAt = (end: number) => {
    for (let k = at; k < end; k++) if (source[k] === "\n") line++
  }
  const afterKeyword = (end: number) => REGEX_KEYWORDS.test(source.slice(Math.max(0, end - 12), end).trimEnd())
  /** Scans a template body from `at`; stops after the closing backtick or after a `${`. */
  const template = () => {
    let k = at
    while (k < source.length && source[k] !== "`") {
      if (source[k] === "\\") k += 2
      else if (source[k] === "$" && source[k + 1] === "{") {
        blank(at, k)
        lineAt(k + 2)
        at = k + 2
        templates.push(depth)
        depth++
        last = "{"
        return
      } else k++
    }
    blank(at, k)
    lineAt(k + 1)
    at = k + 1
    last = "`"
  }
  while (at < source.length) {
    const ch = source[at]!
    const next = source[at + 1]
    if (ch === "\n") {
      line++
      at++
    } else if (ch === "/" && next === "/") {
      const end = source.indexOf("\n", at) === -1 ? source.length : source.indexOf("\n", at)
      commented.add(line)
      blank(at, end)
      at = end
    } else if (ch === "/" && next === "*") {
      const end = source.indexOf("*/", at + 2) === -1 ? source.length : source.indexOf("*/", at + 2) + 2
      const first = line
      lineAt(end)
      for (let l = first; l <= line; l++) commented.add(l)
      blank(at, end)
      at = end
    } else if (ch === '"' || ch === "'") {
      let k = at + 1
      while (k < source.length && source[k] !== ch && source[k] !== "\n") k += source[k] === "\\" ? 2 : 1
      blank(at + 1, k)
      at = k + 1
      last = ch
    } else if (ch === "`") {
      at++
      template()
    } else if (ch === "/" && (REGEX_AFTER.has(last) || last === "" || afterKeyword(at))) {
      let k = at + 1
      let inClass = false
      while (k < source.length && source[k] !== "\n" && (inClass || source[k] !== "/")) {
        if (source[k] === "\\") k++
        else if (source[k] === "[") inClass = true
        else if (source[k] === "]") inClass = false
        k++
      }
      blank(at + 1, k)
      at = k + 1
      last = "/"
    } else {
      if (ch === "{") depth++
      if (ch === "}") {
        depth--
        if (templates.length && templates.at(-1) === depth) {
          templates.pop()
          at++
          template()
          continue
        }
      }
      if (!/\s/.test(ch)) last = /[A-Za-z0-9_$]/.test(ch) ? "a" : ch
      at++
    }
  }
  return { code: out.join(""), commented }
}

/** The offset just past the bracket that closes the one at `open`. */
function closing(code: string, open: number): number {
  const pairs: Record<string, string> = { "(": ")", "{": "}", "[": "]" }
  const stack: string[] = []
  for (let at = open; at < code.length; at++) {
    const ch = code[at]!
    if (ch in pairs) stack.push(pairs[ch]!)
    else if (ch === stack.at(-1)) {
      stack.pop()
      if (!stack.length) return at + 1
    }
  }
  return code.length
}

/** The top-level arguments of the call whose `(` is at `open`. */
function argumentsOf(code: string, open: number): string[] {
  const end = closing(code, open) - 1
  const args: string[] = []
  let depth = 0
  let start = open + 1
  for (let at = open + 1; at < end; at++) {
    const ch = code[at]!
    if ("([{".includes(ch)) depth++
    else if (")]}".includes(ch)) depth--
    else if (ch === "," && depth === 0) {
      args.push(code.slice(start, at))
      start = at + 1
    }
  }
  args.push(code.slice(start, end))
  return args.filter((arg) => arg.trim() !== "")
}

const HANDLER =
  /^\s*(?:async\s+)?(?:\(([^)]*)\)|([A-Za-z_$][\w$]*))\s*(?::[^=]*)?=>|^\s*(?:async\s+)?function\b[^(]*\(([^)]*)\)/

/**
 * A handler drops the error when it takes no parameter or never reads it, and throws nothing. A named
 * function (`.catch(reject)`) is handed the error, so it is not counted.
 */
function drops(handler: string): boolean {
  const match = HANDLER.exec(handler)
  if (!match) return false
  const params = (match[1] ?? match[2] ?? match[3] ?? "").trim()
  const body = handler.slice(match[0].length)
  return !/\bthrow\b/.test(body) && unread(params, body)
}

/** True when the binding list names nothing, or its one plain name is not read in `body`. */
function unread(params: string, body: string): boolean {
  if (params === "") return true
  const name = /^[A-Za-z_$][\w$]*/.exec(params)?.[0]
  return name !== undefined && !new RegExp(`(?<![.\\w$])${name.replace("$", "\\$")}\\b`).test(body)
}

/** Every swallowing form in `source`, with the line it starts on. */
export function swallows(source: string): (Swallow & { end: number })[] {
  const { code } = lex(source)
  const lineOf = (offset: number) => code.slice(0, offset).split("\n").length
  const found: (Swallow & { end: number })[] = []
  const add = (offset: number, end: number, form: Swallow["form"]) =>
    found.push({ line: lineOf(offset), end: lineOf(end), form })
  for (const match of code.matchAll(/(?<![.\w$])catch\s*(?:\(([^)]*)\))?\s*\{/g)) {
    const open = match.index + match[0].length - 1
    const end = closing(code, open)
    const body = code.slice(open, end)
    if (!/\bthrow\b/.test(body) && unread((match[1] ?? "").trim(), body)) add(match.index, end, "catch block")
  }
  for (const match of code.matchAll(/\.\s*catch\s*\(/g)) {
    const open = match.index + match[0].length - 1
    const handler = argumentsOf(code, open)[0]
    if (handler !== undefined && drops(handler)) add(match.index, closing(code, open), ".catch()")
  }
  for (const match of code.matchAll(/\.\s*then\s*\(/g)) {
    const open = match.index + match[0].length - 1
    const onRejected = argumentsOf(code, open)[1]
    if (onRejected !== undefined && drops(onRejected)) add(match.index, closing(code, open), ".then(_, onRejected)")
  }
  for (const match of code.matchAll(/(?<![.\w$])finally\s*\{/g)) {
    const open = match.index + match[0].length - 1
    const end = closing(code, open)
    if (/\b(return|throw)\b/.test(code.slice(open, end))) add(match.index, end, "finally that returns or throws")
  }
  return found.sort((a, b) => a.line - b.line)
}

/**
 * The swallows with no reason: no comment on their line or the two before it, nor on the first line of
 * a handler or block that spans lines (where `} catch {` puts its reason).
 */
export function unexplained(source: string): Swallow[] {
  const { commented } = lex(source)
  return swallows(source)
    .filter(({ line, end }) => {
      const window = [line - 2, line - 1, line, ...(end > line ? [line + 1] : [])]
      return !window.some((l) => commented.has(l))
    })
    .map(({ line, form }) => ({ line, form }))
}
