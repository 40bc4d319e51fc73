// The pure half of the replaced file tools: the output formats OpenCode's built-ins print (so models
// behave the same), the edit replacement, and the apply_patch grammar. No IO here.
import { isAbsolute, relative, resolve } from "node:path"

export const DEFAULT_READ_LIMIT = 2000
const MAX_LINE_LENGTH = 2000
const MAX_READ_BYTES = 50 * 1024
export const SEARCH_LIMIT = 100

/** An absolute path for a tool's path argument (relative ones are relative to the workspace). */
export function absolutePath(files: { workspace: string; standIn?: string }, path: string): string {
  const absolute = isAbsolute(path) ? resolve(path) : resolve(files.workspace, path)
  const { standIn } = files
  if (standIn && (absolute === standIn || absolute.startsWith(`${standIn}/`)))
    return files.workspace + absolute.slice(standIn.length)
  return absolute
}

/** The workspace-relative form of an absolute path ("" for the workspace itself). */
export const workspaceRelative = (workspace: string, path: string) => relative(workspace, path)

/** `<path>…</path><type>file</type><content>` with 1-based numbered lines and the paging note. */
export function formatRead(path: string, text: string, offset = 1, limit = DEFAULT_READ_LIMIT): string {
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  const start = Math.max(1, Math.floor(offset))
  if (start > lines.length && !(start === 1 && lines.length === 0))
    throw new EditError(`Offset ${start} is out of range for this file (${lines.length} lines)`)
  const out: string[] = []
  let bytes = 0
  let last = start - 1
  let capped = false
  for (let index = start - 1; index < lines.length && out.length < limit; index++) {
    const raw = lines[index]!
    const line =
      raw.length > MAX_LINE_LENGTH
        ? `${raw.slice(0, MAX_LINE_LENGTH)}... (line truncated to ${MAX_LINE_LENGTH} chars)`
        : raw
    const entry = `${index + 1}: ${line}`
    if (bytes + entry.length + 1 > MAX_READ_BYTES) {
      capped = true
      break
    }
    out.push(entry)
    bytes += entry.length + 1
    last = index + 1
  }
  let note: string
  if (capped)
    note =
      `(Output capped at ${MAX_READ_BYTES / 1024} KB. Showing lines ${start}-${last}. ` +
      `Use offset=${last + 1} to continue.)`
  else if (last < lines.length)
    note = `(Showing lines ${start}-${last} of ${lines.length}. Use offset=${last + 1} to continue.)`
  else note = `(End of file - total ${lines.length} lines)`
  return [`<path>${path}</path>`, "<type>file</type>", "<content>", ...out, "", note, "</content>"].join("\n")
}

/** A directory as the built-in shows it: entries sorted, directories with a trailing slash, a count. */
export function formatDirectory(path: string, entries: string[], offset = 1, limit = DEFAULT_READ_LIMIT): string {
  const sorted = [...entries].sort((a, b) => a.localeCompare(b))
  const start = Math.max(1, Math.floor(offset))
  const shown = sorted.slice(start - 1, start - 1 + limit)
  const note =
    start - 1 + shown.length < sorted.length
      ? `(Showing ${shown.length} of ${sorted.length} entries. ` +
        `Use 'offset' parameter to read beyond entry ${start - 1 + shown.length})`
      : `(${sorted.length} entries)`
  return [`<path>${path}</path>`, "<type>directory</type>", "<entries>", ...shown, "", note, "</entries>"].join("\n")
}

/** Binary content (a NUL byte in the first 8 KB) is not shown to a model as text. */
export const looksBinary = (text: string) => text.slice(0, 8192).includes("\0")

export class EditError extends Error {
  override readonly name = "EditError"
}

/** Lines of `content` that equal `find`'s lines once each is trimmed: the exact original text, or undefined. */
function trimmedLinesMatch(content: string, find: string): string[] {
  const want = find.split("\n").map((line) => line.trim())
  while (want.at(-1) === "") want.pop()
  if (!want.length) return []
  const lines = content.split("\n")
  const found: string[] = []
  for (let start = 0; start + want.length <= lines.length; start++) {
    if (want.every((line, offset) => lines[start + offset]!.trim() === line))
      found.push(lines.slice(start, start + want.length).join("\n"))
  }
  return found
}

const MULTIPLE = "Found multiple matches for oldString. Provide more surrounding context to make the match unique."

/** The edit tool's replacement: exact text first, then the same lines with other indentation. */
export function replaceText(content: string, oldString: string, newString: string, replaceAll = false): string {
  if (oldString === newString) throw new EditError("No changes to apply: oldString and newString are identical.")
  if (oldString === "")
    throw new EditError(
      "oldString cannot be empty when editing an existing file. Provide the exact text to replace, " +
        "or use write for an intentional full-file replacement.",
    )
  const exact = content.split(oldString).length - 1
  if (exact === 1 || (exact > 1 && replaceAll)) return content.split(oldString).join(newString)
  if (exact > 1) throw new EditError(MULTIPLE)
  const loose = trimmedLinesMatch(content, oldString)
  if (loose.length === 1 || (loose.length > 1 && replaceAll))
    return loose.reduce((text, match) => text.replace(match, () => newString), content)
  if (loose.length > 1) throw new EditError(MULTIPLE)
  throw new EditError(
    "Could not find oldString in the file. It must match exactly, including whitespace, indentation, and line endings.",
  )
}

export type PatchOp =
  | { kind: "add"; path: string; content: string }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo?: string; hunks: Hunk[] }

export interface Hunk {
  /** Lines the hunk expects (context and removed), and what replaces them (context and added). */
  old: string[]
  new: string[]
  endOfFile: boolean
}

const HEADER = /^\*\*\* (Add File|Update File|Delete File|Move to):[ \t]*(.*)$/

/** Paths named by a patch's file headers, parsed or not (the guard refuses before the parser runs). */
export function patchTargets(text: string): string[] {
  return text.split(/\r?\n/).flatMap((line) => {
    const path = HEADER.exec(line)?.[2]?.trim()
    return path ? [path] : []
  })
}

/**
 * The apply_patch grammar as OpenCode parses it (`*** Begin Patch` … `*** End Patch`, file headers
 * with or without a space after the colon, `@@` hunks of ' ', '-', '+' lines, `*** End of File`).
 */
export function parsePatch(text: string): PatchOp[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n")
  const begin = lines.findIndex((line) => line.trim() === "*** Begin Patch")
  const end = lines.findIndex((line) => line.trim() === "*** End Patch")
  if (begin < 0 || end < begin)
    throw new EditError("The patch must start with '*** Begin Patch' and end with '*** End Patch'.")
  const ops: PatchOp[] = []
  let index = begin + 1
  while (index < end) {
    const header = HEADER.exec(lines[index]!)
    if (!header) {
      if (lines[index]!.trim() === "") {
        index++
        continue
      }
      throw new EditError(`Unexpected line ${index + 1} in the patch: ${JSON.stringify(lines[index]!.slice(0, 80))}`)
    }
    const path = header[2]!.trim()
    if (!path) throw new EditError(`Line ${index + 1}: a file header without a path.`)
    index++
    if (header[1] === "Add File") {
      const content: string[] = []
      while (index < end && lines[index]!.startsWith("+")) content.push(lines[index++]!.slice(1))
      ops.push({ kind: "add", path, content: content.length ? `${content.join("\n")}\n` : "" })
    } else if (header[1] === "Delete File") ops.push({ kind: "delete", path })
    else if (header[1] === "Update File") {
      const op: PatchOp = { kind: "update", path, hunks: [] }
      const move = HEADER.exec(lines[index] ?? "")
      if (move?.[1] === "Move to") {
        op.moveTo = move[2]!.trim()
        index++
      }
      let hunk: Hunk | undefined
      while (index < end && !HEADER.exec(lines[index]!)) {
        const line = lines[index++]!
        if (line.startsWith("@@")) {
          hunk = { old: [], new: [], endOfFile: false }
          op.hunks.push(hunk)
          continue
        }
        if (line.trim() === "*** End of File") {
          if (hunk) hunk.endOfFile = true
          continue
        }
        if (!hunk) {
          hunk = { old: [], new: [], endOfFile: false }
          op.hunks.push(hunk)
        }
        const body = line.slice(1)
        if (line.startsWith("+")) hunk.new.push(body)
        else if (line.startsWith("-")) hunk.old.push(body)
        else {
          hunk.old.push(line.startsWith(" ") ? body : line)
          hunk.new.push(line.startsWith(" ") ? body : line)
        }
      }
      ops.push(op)
    } else throw new EditError(`Line ${index}: '*** Move to' must follow an '*** Update File' header.`)
  }
  if (!ops.length) throw new EditError("The patch changes no files.")
  return ops
}

/** Applies one file's hunks in order; each must match exactly once after the previous one (then trimmed). */
export function applyHunks(path: string, content: string, hunks: Hunk[]): string {
  const lines = content.split("\n")
  const trailing = lines.at(-1) === ""
  if (trailing) lines.pop()
  let cursor = 0
  for (const hunk of hunks) {
    const at = findLines(lines, hunk.old, cursor, hunk.endOfFile)
    if (at < 0)
      throw new EditError(
        `The patch does not apply to ${path}: these lines were not found:\n${hunk.old.join("\n").slice(0, 400)}`,
      )
    lines.splice(at, hunk.old.length, ...hunk.new)
    cursor = at + hunk.new.length
  }
  return `${lines.join("\n")}${trailing || lines.length ? "\n" : ""}`
}

function findLines(lines: string[], want: string[], from: number, endOfFile: boolean): number {
  // A hunk of additions only has nothing to anchor on: OpenCode appends it to the file.
  if (!want.length) return lines.length
  for (const same of [
    (a: string, b: string) => a === b,
    (a: string, b: string) => a.trimEnd() === b.trimEnd(),
    (a: string, b: string) => a.trim() === b.trim(),
  ]) {
    const starts = endOfFile
      ? [lines.length - want.length]
      : Array.from({ length: Math.max(0, lines.length - want.length - from + 1) }, (_, i) => from + i)
    for (const start of starts)
      if (start >= 0 && want.every((line, offset) => same(lines[start + offset] ?? "\u0000", line))) return start
  }
  return -1
}
