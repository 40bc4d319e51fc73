// Codex reads MCP servers from `${CODEX_HOME:-~/.codex}/config.toml`. We edit that file ourselves:
// `codex mcp add` (0.171) cannot set `tool_timeout_sec` and moves a comment that trails the previous
// table below the new one. Edits keep every byte we do not own: a new table is appended, an
// existing one is patched with toml-patch, and removal cuts exactly our table, each checked by
// re-parsing the result.
import { parse, patch } from "@decimalturn/toml-patch"
import { fail } from "../../errors"
import { SERVER_NAME } from "../../version"

export interface McpEntry {
  command: string
  args: string[]
  /** The parent's deadline for one tool call, in seconds. */
  timeoutSec: number
  /** Claude Code only: its `alwaysLoad`, so our tools are offered up front instead of behind its tool search. */
  alwaysLoad?: boolean
  /** Codex only: `default_tools_approval_mode = "approve"`, so our tools run without a prompt per call. */
  approveTools?: boolean
}

export interface CodexEntry {
  command?: unknown
  args?: unknown
  tool_timeout_sec?: unknown
  default_tools_approval_mode?: unknown
}

type Table = Record<string, unknown>
const isTable = (value: unknown): value is Table => typeof value === "object" && value !== null && !Array.isArray(value)

function parseToml(text: string, file: string): Table {
  try {
    const doc: unknown = parse(text)
    return isTable(doc) ? doc : {}
  } catch (error) {
    throw fail(
      "Install",
      `${file} is not valid TOML: ${(error as Error).message}`,
      `Fix the TOML syntax in ${file} (it was not changed), then rerun the command.`,
    )
  }
}

export function readCodexEntry(text: string, file = "config.toml"): CodexEntry | undefined {
  const servers = parseToml(text, file).mcp_servers
  const entry = isTable(servers) ? servers[SERVER_NAME] : undefined
  return isTable(entry) ? entry : undefined
}

const tomlString = (value: string) => JSON.stringify(value)

function codexTable(entry: McpEntry): string {
  return [
    `[mcp_servers.${SERVER_NAME}]`,
    `command = ${tomlString(entry.command)}`,
    `args = [${entry.args.map(tomlString).join(", ")}]`,
    `tool_timeout_sec = ${entry.timeoutSec}`,
    ...(entry.approveTools ? ['default_tools_approval_mode = "approve"'] : []),
    "",
  ].join("\n")
}

/** The document without our server (and without an `mcp_servers` left empty by its removal). */
function without(doc: Table): Table {
  const servers = isTable(doc.mcp_servers) ? { ...doc.mcp_servers } : {}
  delete servers[SERVER_NAME]
  const next: Table = { ...doc, mcp_servers: servers }
  if (Object.keys(servers).length === 0) delete next.mcp_servers
  return next
}

function entryMatches(doc: Table, entry: McpEntry): boolean {
  const found = isTable(doc.mcp_servers) ? doc.mcp_servers[SERVER_NAME] : undefined
  return (
    isTable(found) &&
    found.command === entry.command &&
    Bun.deepEquals(found.args, entry.args) &&
    found.tool_timeout_sec === entry.timeoutSec &&
    (found.default_tools_approval_mode === "approve") === (entry.approveTools === true)
  )
}

/** config.toml text with our server registered as `entry`; everything else unchanged. */
export function upsertCodexEntry(text: string, entry: McpEntry, file = "config.toml"): string {
  const doc = parseToml(text, file)
  const existing = readCodexEntry(text, file)
  if (!existing) {
    const separator = text === "" ? "" : text.endsWith("\n\n") ? "" : text.endsWith("\n") ? "\n" : "\n\n"
    const appended = `${text}${separator}${codexTable(entry)}`
    try {
      if (entryMatches(parseToml(appended, file), entry)) return appended
    } catch {
      // The appended text does not parse: patch the document instead (below).
    }
  }
  const servers = isTable(doc.mcp_servers) ? doc.mcp_servers : {}
  const current = isTable(servers[SERVER_NAME]) ? servers[SERVER_NAME] : {}
  const next = {
    ...doc,
    mcp_servers: {
      ...servers,
      [SERVER_NAME]: {
        ...current,
        command: entry.command,
        args: entry.args,
        tool_timeout_sec: entry.timeoutSec,
        ...(entry.approveTools ? { default_tools_approval_mode: "approve" } : {}),
      },
    },
  }
  return patch(text, next)
}

const HEADER = new RegExp(`^\\[\\s*mcp_servers\\s*\\.\\s*(?:${SERVER_NAME}|"${SERVER_NAME}")\\s*\\][ \\t]*(?:#.*)?$`)
const KEY_LINE = /^[ \t]*[A-Za-z0-9_-]+[ \t]*=.*$/

/** Cuts our table's header and key lines (and the blank line before it) out of the text, or undefined. */
function cutTable(text: string): string | undefined {
  const lines = text.split("\n")
  const start = lines.findIndex((line) => HEADER.test(line))
  if (start < 0) return undefined
  let end = start + 1
  while (end < lines.length && KEY_LINE.test(lines[end]!)) end++
  const from = start > 0 && lines[start - 1] === "" ? start - 1 : start
  return [...lines.slice(0, from), ...lines.slice(end)].join("\n")
}

/** config.toml text without our server; unchanged when it is not there. */
export function removeCodexEntry(text: string, file = "config.toml"): string {
  const doc = parseToml(text, file)
  if (!readCodexEntry(text, file)) return text
  const cut = cutTable(text)
  if (cut !== undefined) {
    try {
      if (Bun.deepEquals(without(doc), without(parseToml(cut, file)), true)) return cut
    } catch {
      // The cut text does not parse: patch the document instead (below).
    }
  }
  return patch(text, without(doc))
}
