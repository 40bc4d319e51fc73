// A stored patch read as sections without holding it whole: the outline overlap detection needs, and
// where each file's section starts (patch_show pages by them).

/** The lines that say what a patch changes where (overlap.ts reads only these). */
const OUTLINE = /^(diff --git |@@ |new file|deleted file|old mode|Binary files|GIT binary patch)/

/**
 * A stored patch's file headers and hunk headers, streamed: what overlap detection needs, without the
 * content. A line that cannot be one of them (past its first 32 bytes) is skipped, not accumulated.
 */
export async function patchOutline(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const kept: string[] = []
  let rest = ""
  let skipping = false
  for await (const chunk of chunks) {
    const text = Buffer.from(chunk).toString("latin1")
    let start = 0
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      const line = skipping ? "" : rest + text.slice(start, end)
      if (!skipping && OUTLINE.test(line)) kept.push(line)
      rest = ""
      skipping = false
      start = end + 1
    }
    if (skipping) continue
    rest += text.slice(start)
    if (rest.length >= 32 && !OUTLINE.test(rest)) {
      rest = ""
      skipping = true
    }
  }
  if (!skipping && OUTLINE.test(rest)) kept.push(rest)
  return Buffer.from(kept.join("\n"), "latin1").toString("utf8")
}

const HEADER = Buffer.from("\ndiff --git ")

/** The byte offsets where the stored patch's file sections (`diff --git` headers) start, read chunk by chunk. */
export const sectionStarts = (path: string) => sectionStartsOf(Bun.file(path).stream())

/** The same over any chunks (a test cuts them at every edge). */
export async function sectionStartsOf(chunks: AsyncIterable<Uint8Array>): Promise<number[]> {
  const starts: number[] = []
  // The last bytes of a chunk are kept, so a header split across two chunks is still found.
  let carry = Buffer.alloc(1, 0x0a)
  let offset = -1
  for await (const chunk of chunks) {
    const window = Buffer.concat([carry, chunk])
    for (let at = window.indexOf(HEADER); at !== -1; at = window.indexOf(HEADER, at + 1)) starts.push(offset + at + 1)
    offset += window.length - Math.min(window.length, HEADER.length - 1)
    carry = window.subarray(window.length - Math.min(window.length, HEADER.length - 1))
  }
  return [...new Set(starts)].sort((a, b) => a - b)
}

/** The patch split into one section per file (`diff --git` headers), in the order of `files`. Pure. */
export function fileSections(text: string): string[] {
  // Content lines of a unified diff start with " ", "+" or "-", and base85 lines with a length letter:
  // only a file header starts with "diff --git ".
  const starts: number[] = text.startsWith("diff --git ") ? [0] : []
  for (let at = text.indexOf("\ndiff --git "); at !== -1; at = text.indexOf("\ndiff --git ", at + 1))
    starts.push(at + 1)
  return starts.map((start, index) => text.slice(start, starts[index + 1] ?? text.length))
}
