// A file that checks itself: one header line naming its kind, its body's length in bytes and the
// body's SHA-256, then the body. A file cut short, grown, or with any byte changed fails the check,
// so recovery never acts on what a failing disk, a bad sector or a stray write left in its place.
// node: builtins only: the confined apply step (apply-step.ts) seals its journal with it.
import { createHash } from "node:crypto"

/** `<kind> <length> <sha256>`: the kind keeps one sealed file from being taken for another. */
const HEADER = /^([a-z][a-z0-9-]{0,39}\/[0-9]{1,3}) ([0-9]{1,12}) ([0-9a-f]{64})\n/

/** The header and body, as written. Pure. */
export function seal(kind: string, body: string): string {
  const bytes = Buffer.from(body, "utf8")
  const sum = createHash("sha256").update(bytes).digest("hex")
  return `${kind} ${bytes.byteLength} ${sum}\n${body}`
}

export type Unsealed =
  | { kind: "sound"; body: string }
  /** No header at all: a file from before files were sealed (the caller decides whether to trust it). */
  | { kind: "unsealed"; text: string }
  | { kind: "damaged"; why: string }

/** The body of a sealed file of `kind`, or why it cannot be trusted. Pure; linear in the text. */
export function unseal(kind: string, text: string): Unsealed {
  const header = HEADER.exec(text.slice(0, 200))
  if (!header) {
    // An old file is JSON; anything else that lacks a header is a header lost to damage.
    return text.trimStart().startsWith("{")
      ? { kind: "unsealed", text }
      : { kind: "damaged", why: "its header is missing" }
  }
  const [line, named, length, sum] = header as unknown as [string, string, string, string]
  if (named !== kind) return { kind: "damaged", why: `it is a ${named} file, not a ${kind} one` }
  const bytes = Buffer.from(text.slice(line.length), "utf8")
  if (bytes.byteLength !== Number(length))
    return { kind: "damaged", why: `it holds ${bytes.byteLength} bytes of the ${length} it was written with` }
  if (createHash("sha256").update(bytes).digest("hex") !== sum)
    return { kind: "damaged", why: "its checksum does not match its content" }
  return { kind: "sound", body: bytes.toString("utf8") }
}

/** The sealed kind of the state dir's own files that recovery acts on (claims of owners, slots and lanes). */
export const STATE_KIND = "oc-orch-state/1"

/** A state file's text, sealed. Pure. */
export const sealState = (value: unknown) => seal(STATE_KIND, JSON.stringify(value))

/**
 * The JSON text of a state file, sealed or from before files were sealed (plain JSON, still read), or
 * why it cannot be trusted. Pure.
 */
export function stateJson(text: string): { json: string } | { problem: string } {
  const unsealed = unseal(STATE_KIND, text)
  // No header at all: what a reader of plain JSON says of it is the better reason.
  if (unsealed.kind === "damaged" && !text.startsWith("oc-orch-")) return { json: text }
  if (unsealed.kind === "damaged") return { problem: `it fails its own check: ${unsealed.why}` }
  return { json: unsealed.kind === "sound" ? unsealed.body : unsealed.text }
}
