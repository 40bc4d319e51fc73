// File names from a worker's patch are data: one holding a newline, a carriage return or a bidi
// override would forge lines (or reorder text) wherever it is shown. Shown names go through here.

/** C0 controls, DEL and C1 controls. */
const isControl = (code: number) => code < 0x20 || (code >= 0x7f && code <= 0x9f)

/** Invisible format characters that reorder or hide text (bidi marks and overrides, zero-width, BOM). */
const isFormat = (code: number) =>
  code === 0x61c ||
  (code >= 0x200b && code <= 0x200f) ||
  (code >= 0x2028 && code <= 0x202e) ||
  (code >= 0x2060 && code <= 0x2069) ||
  code === 0xfeff

const unsafe = (char: string) => {
  const code = char.codePointAt(0)!
  return isControl(code) || isFormat(code)
}

/** True when a name holds a control character (C0, DEL, C1): refused as a name to write. */
export const hasControl = (name: string) => [...name].some((char) => isControl(char.codePointAt(0)!))

/** The name as is when harmless; otherwise quoted, with every unsafe character as a \u escape. Pure. */
export function shownName(name: string): string {
  const chars = [...name]
  if (!chars.some(unsafe)) return name
  const escaped = chars.map((char) =>
    unsafe(char)
      ? `\\u${char.codePointAt(0)!.toString(16).padStart(4, "0")}`
      : char === '"' || char === "\\"
        ? `\\${char}`
        : char,
  )
  return `"${escaped.join("")}"`
}
