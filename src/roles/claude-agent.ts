// A Claude Code subagent file (`.claude/agents/<name>.md`: YAML frontmatter, then the prompt) read as a
// role. Its tools decide the profile: read tools only → read-only, any tool that writes or runs a shell
// → write. What has no counterpart in a delegated agent (the web, MCP servers, subagents, hooks, a
// permission mode) refuses the file with that reason rather than running it as something it is not.
// The file may come from a workspace an agent wrote to, so it is read as hostile text: bounded in size,
// parsed line by line in one pass, no nesting beyond a list under a key.
import { RESERVED_ROLE_NAMES, ROLE_NAME, type RoleProfile } from "../config/role-names"

/** The largest subagent file read: a prompt is a page or two; anything larger is refused, not cut. */
export const MAX_AGENT_FILE_BYTES = 64 * 1024

const READ_TOOLS = new Set(["Read", "Grep", "Glob", "LS", "NotebookRead", "TodoWrite", "TodoRead"])
const WRITE_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"])

/** Frontmatter keys that only change how Claude Code shows the agent. */
const COSMETIC_KEYS = new Set(["color"])
const KNOWN_KEYS = new Set(["name", "description", "tools", "model", ...COSMETIC_KEYS])

/** Claude Code's model names: none is an OpenCode model, so the profile's route runs the role. */
const CLAUDE_MODELS = new Set(["inherit", "sonnet", "opus", "haiku"])

export interface ClaudeAgent {
  name: string
  description: string
  profile: RoleProfile
  prompt: string
  /** An OpenCode model the file names (provider/model); undefined: the profile's route. */
  model?: string
  /** What the mapping decided that a reader of the listing should know. */
  notes: string[]
}

export type Mapped = { ok: true; agent: ClaudeAgent } | { ok: false; name?: string; reason: string }

const refuse = (reason: string, name?: string): Mapped => ({ ok: false, name, reason })

/** The role a subagent file maps to, or why it cannot be one. */
export function mapClaudeAgent(text: string): Mapped {
  if (text.length > MAX_AGENT_FILE_BYTES) return refuse(`the file is larger than ${MAX_AGENT_FILE_BYTES} bytes`)
  const parsed = splitFrontmatter(text)
  if (!parsed.ok) return refuse(parsed.reason)
  const { fields, body } = parsed
  const name = scalar(fields.get("name"))
  if (name === undefined) return refuse("the frontmatter has no name")
  if (!ROLE_NAME.test(name))
    return refuse(`the name "${name.slice(0, 60)}" is not lower case letters, digits and hyphens (at most 40)`)
  if ((RESERVED_ROLE_NAMES as readonly string[]).includes(name))
    return refuse(`the name "${name}" is a built-in role's`, name)
  for (const key of fields.keys())
    if (!KNOWN_KEYS.has(key))
      return refuse(`its frontmatter key "${key.slice(0, 60)}" has no counterpart in a delegated agent`, name)
  const description = scalar(fields.get("description"))
  if (!description) return refuse("the frontmatter has no description", name)
  const prompt = body.trim()
  if (!prompt) return refuse("the file has no prompt after its frontmatter", name)

  const notes: string[] = []
  const tools = toolList(fields.get("tools"))
  let profile: RoleProfile
  if (tools === undefined) {
    profile = "write"
    notes.push("no tools listed (Claude Code gives it every tool): runs with the write profile, without web or MCP")
  } else {
    const unmapped = tools.find((tool) => !READ_TOOLS.has(tool) && !WRITE_TOOLS.has(tool))
    if (unmapped !== undefined)
      return refuse(
        `its tool "${unmapped.slice(0, 60)}" has no counterpart in a delegated agent (no web, MCP or subagents)`,
        name,
      )
    profile = tools.some((tool) => WRITE_TOOLS.has(tool)) ? "write" : "read-only"
  }
  const model = scalar(fields.get("model"))
  let openCodeModel: string | undefined
  if (model !== undefined && /^[^/\s]+\/\S+$/.test(model)) openCodeModel = model
  else if (model !== undefined && !CLAUDE_MODELS.has(model))
    return refuse(`its model "${model.slice(0, 60)}" is neither Claude Code's nor an OpenCode provider/model`, name)
  return {
    ok: true,
    agent: { name, description: firstLine(description), profile, prompt, model: openCodeModel, notes },
  }
}

type Field = { value: string; items: string[] }

/**
 * The frontmatter's top-level keys and the body after it. Handles what subagent files use: `key: value`
 * (quoted or not), a block scalar (`|` or `>`) and a `- item` list under a key. Anything nested deeper is
 * part of the value it sits under, never parsed.
 */
function splitFrontmatter(
  text: string,
): { ok: true; fields: Map<string, Field>; body: string } | { ok: false; reason: string } {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  if (lines[0]?.trim() !== "---") return { ok: false, reason: "it does not start with a --- frontmatter block" }
  const close = lines.findIndex((line, i) => i > 0 && line.trim() === "---")
  if (close < 0) return { ok: false, reason: "its frontmatter block is not closed with ---" }
  const fields = new Map<string, Field>()
  let current: Field | undefined
  for (const line of lines.slice(1, close)) {
    if (!line.trim() || line.trimStart().startsWith("#")) continue
    if (/^\s/.test(line)) {
      // Under the last key: a list item or a line of a block scalar.
      if (!current) return { ok: false, reason: "its frontmatter starts indented" }
      const item = line.trim()
      if (item.startsWith("- ")) current.items.push(unquote(item.slice(2).trim()))
      else current.value = current.value ? `${current.value} ${item}` : item
      continue
    }
    const colon = line.indexOf(":")
    if (colon <= 0) return { ok: false, reason: `its frontmatter line "${line.slice(0, 60)}" is not key: value` }
    const key = line.slice(0, colon).trim()
    if (fields.has(key)) return { ok: false, reason: `its frontmatter states "${key.slice(0, 60)}" twice` }
    const raw = line.slice(colon + 1).trim()
    current = { value: raw === "|" || raw === ">" || raw === "|-" || raw === ">-" ? "" : unquote(raw), items: [] }
    fields.set(key, current)
  }
  return { ok: true, fields, body: lines.slice(close + 1).join("\n") }
}

function unquote(value: string): string {
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0])
    return value.slice(1, -1)
  return value
}

const scalar = (field: Field | undefined) => (field?.value ? field.value : undefined)

/** `tools: Read, Grep` or a `- Read` list, or `[Read, Grep]`; undefined when the key is absent or empty. */
function toolList(field: Field | undefined): string[] | undefined {
  if (!field) return undefined
  const inline = field.value.replace(/^\[/, "").replace(/\]$/, "")
  const tools = [...inline.split(","), ...field.items].map((tool) => unquote(tool.trim())).filter(Boolean)
  return tools.length ? tools : undefined
}

const firstLine = (text: string) => {
  const line = text.split("\\n")[0]!.trim()
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}
