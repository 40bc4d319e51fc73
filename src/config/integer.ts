// The one parser for integer environment variables, shared by the MCP side and the plugin bundle
// (so it imports nothing but the error type: no zod in the plugin).
import { fail } from "../errors"

export interface IntegerRange {
  min: number
  max: number
  /** Shown in the message when the caller has a default. */
  fallback?: number
}

/**
 * Unset or empty means "use the default" (undefined): `VAR= cmd` is how a shell clears a variable
 * for one command, and a config template that leaves a value blank means the same. Anything else
 * must be digits only (no sign, exponent, `0x`, unit or surrounding space) within the range, or it
 * fails closed: a typo must never silently lift a cap.
 */
export function parseInteger(variable: string, raw: string | undefined, range: IntegerRange): number | undefined {
  if (raw === undefined || raw === "") return undefined
  const expected =
    `an integer from ${range.min} to ` +
    `${range.max}${range.fallback === undefined ? "" : ` (default ${range.fallback})`}`
  const invalid = (hint: string) =>
    fail("Usage", `${variable}=${JSON.stringify(raw)} is invalid: expected ${expected}.`, hint, {
      variable,
      value: raw,
      min: range.min,
      max: range.max,
    })
  const orUnset = "or unset it for the default"
  if (raw.trim() !== raw) throw invalid(`Remove the whitespace from ${variable}, ${orUnset}.`)
  if (!/^[0-9]+$/.test(raw))
    throw invalid(`Set ${variable} to digits only (no sign, decimal point, exponent or unit), ${orUnset}.`)
  // Every max is a safe integer, so a number too long to be exact is out of range here too.
  const value = Number(raw)
  if (value < range.min || value > range.max)
    throw invalid(`Set ${variable} to a value from ${range.min} to ${range.max}, ${orUnset}.`)
  return value
}
