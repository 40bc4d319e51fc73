import { describe, expect, test } from "bun:test"
import { readCodexEntry, removeCodexEntry, upsertCodexEntry } from "../../src/install/integrations/codex"

const entry = { command: "/d/current/bin/opencode-mcp-orchestrator", args: ["serve"], timeoutSec: 1500 }
const USER = `# Codex settings, hand-written
model = "o3"   # my favourite

[mcp_servers.other]
command = "/bin/other"
args = ["x"]
# a comment that trails the other server

[profiles.fast]
model = "o4-mini"
`

describe("config.toml edits keep every byte we do not own", () => {
  test("add appends our table; the user's text stays a byte-for-byte prefix", () => {
    const out = upsertCodexEntry(USER, entry)
    expect(out.startsWith(USER)).toBe(true)
    expect(readCodexEntry(out)).toEqual({ command: entry.command, args: ["serve"], tool_timeout_sec: 1500 })
  })

  test("add then remove gives back the exact original", () => {
    expect(removeCodexEntry(upsertCodexEntry(USER, entry))).toBe(USER)
    expect(removeCodexEntry(upsertCodexEntry("", entry))).toBe("")
    const noNewline = 'model = "o3"'
    expect(removeCodexEntry(upsertCodexEntry(noNewline, entry))).toBe(`${noNewline}\n`)
  })

  test("our table in the middle, followed by a comment and another table: removal cuts only ours", () => {
    const middle = `${USER}\n[mcp_servers.opencode-agents]\ncommand = "/old"\nargs = ["serve"]\n\n# about zed\n[mcp_servers.zed]\ncommand = "/z"\n`
    expect(removeCodexEntry(middle)).toBe(`${USER}\n# about zed\n[mcp_servers.zed]\ncommand = "/z"\n`)
  })

  test("updating the timeout and command touches only those values", () => {
    const before = upsertCodexEntry(USER, { ...entry, timeoutSec: 600, command: "/old" })
    const after = upsertCodexEntry(before, entry)
    expect(after).toBe(upsertCodexEntry(USER, entry))
    expect(upsertCodexEntry(after, entry)).toBe(after)
  })

  test("the tools approval is written with the entry, added to an existing one, and removed with our table", () => {
    const approved = { ...entry, approveTools: true }
    const fresh = upsertCodexEntry(USER, approved)
    expect(fresh.startsWith(USER)).toBe(true)
    expect(readCodexEntry(fresh)?.default_tools_approval_mode).toBe("approve")
    const added = upsertCodexEntry(upsertCodexEntry(USER, entry), approved)
    expect(readCodexEntry(added)?.default_tools_approval_mode).toBe("approve")
    expect(upsertCodexEntry(added, approved)).toBe(added)
    expect(removeCodexEntry(fresh)).toBe(USER)
    expect(removeCodexEntry(added)).toBe(USER)
  })

  test("a file without our server is returned unchanged by remove", () => {
    expect(removeCodexEntry(USER)).toBe(USER)
  })

  test("invalid TOML is refused with the file named, never rewritten", () => {
    expect(() => upsertCodexEntry("model = \n[[", entry, "/h/.codex/config.toml")).toThrow(
      /\/h\/\.codex\/config\.toml is not valid TOML/,
    )
  })
})
