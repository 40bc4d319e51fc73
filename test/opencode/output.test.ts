// session_output's pure core over hand-built OpenCode messages: a 500-event transcript paged with a
// cursor reaches every entry exactly once, reasoning never shows, long outputs are clipped.
import { expect, test } from "bun:test"
import type { Message, Part } from "@opencode-ai/sdk/v2"
import { entriesOf, lastAnswer, page, renderEntries } from "../../src/opencode/output"

type Turn = { info: Message; parts: Part[] }
const user = (text: string): Turn => ({ info: { role: "user" } as Message, parts: [{ type: "text", text } as Part] })
const assistant = (parts: Part[], error?: { name: string; data: { message: string } }): Turn => ({
  info: { role: "assistant", ...(error && { error }) } as unknown as Message,
  parts,
})
const text = (value: string) => ({ type: "text", text: value }) as Part
const reasoning = (value: string) => ({ type: "reasoning", text: value }) as Part
const tool = (name: string, path: string, output: string) =>
  ({
    type: "tool",
    tool: name,
    callID: path,
    state: { status: "completed", input: { filePath: path }, output },
  }) as unknown as Part

/** A brief, then 249 steps of (reasoning, a read, a line of text), then the report: 500 entries. */
function longSession(): Turn[] {
  const turns: Turn[] = [user("Find the bug")]
  for (let i = 0; i < 249; i++)
    turns.push(
      assistant([
        reasoning(`secret thought ${i}`),
        tool("read", `src/f${i}.ts`, `contents ${i}`),
        text(`looked at f${i}`),
      ]),
    )
  turns.push(assistant([text("The bug is in f42.")]))
  return turns
}

test("a 500-entry transcript pages with a cursor: every entry once, in order, reasoning never", () => {
  const entries = entriesOf(longSession())
  expect(entries).toHaveLength(500)
  const seen: number[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const current = page(entries, cursor, 64)
    pages++
    expect(current.total).toBe(500)
    seen.push(...current.entries.map((entry) => entry.index))
    cursor = current.nextCursor
  } while (cursor)
  expect(pages).toBe(8)
  expect(seen).toEqual([...Array(500).keys()])
  expect(renderEntries(entries)).not.toContain("secret thought")
  expect(entries[1]).toMatchObject({ role: "assistant", kind: "tool", tool: "read", text: "src/f0.ts\ncontents 0" })
  expect(entries.at(-1)).toMatchObject({ role: "assistant", kind: "text", text: "The bug is in f42." })
})

test("the last page has no cursor, and a cursor that is not one is refused", () => {
  const entries = entriesOf(longSession())
  expect(page(entries, "490", 50).nextCursor).toBeUndefined()
  expect(page(entries, "490", 50).entries).toHaveLength(10)
  expect(() => page(entries, "-3", 10)).toThrow(RangeError)
  expect(() => page(entries, "abc", 10)).toThrow(RangeError)
})

test("tool outputs and texts longer than the clip are cut and marked", () => {
  const entries = entriesOf(
    [user("go"), assistant([tool("bash", "ls", "x".repeat(10_000)), text("é".repeat(3000))])],
    500,
  )
  expect(entries[1]!.clipped).toBe(true)
  expect(Buffer.byteLength(entries[1]!.text)).toBeLessThanOrEqual(504)
  // Cut on a character boundary: no broken multi-byte character.
  expect(entries[2]!.text.endsWith("é…")).toBe(true)
  expect(entries[0]!.clipped).toBeUndefined()
})

test("the last answer is the newest assistant text; an assistant error is an entry", () => {
  const turns = [
    ...longSession(),
    assistant([reasoning("hmm")], { name: "APIError", data: { message: "rate limited" } }),
  ]
  expect(lastAnswer(turns)).toBe("The bug is in f42.")
  expect(entriesOf(turns).at(-1)).toMatchObject({ kind: "error", text: "APIError: rate limited" })
})
