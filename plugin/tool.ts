// One declaration per plugin tool: its name, its description (a .md file in plugin/text) and its
// arguments, each argument one value that is both the JSON Schema OpenCode shows the model and the
// check its value passes. OpenCode 1.18.33 does not validate a plugin tool's JSON-Schema arguments
// (and shows the model every key as required), so a call may lack any of them or carry another type:
// the call is refused before `execute` runs, with a message the model acts on. Nothing else reads
// `args` by hand.
import type { JsonSchema, ToolContext, ToolDefinition, ToolOutput } from "./types"

/** What is wrong with one argument's value, said to the model. */
class Problem {
  constructor(readonly why: string) {}
}

export interface Arg<T> {
  schema: JsonSchema
  /** A call without it is refused (every other argument has a meaning when left out). */
  required: boolean
  /** The value a tool gets, or the Problem with it. */
  read(value: unknown): T | Problem
}

type ArgsSpec = Record<string, Arg<unknown>>
export type ArgsOf<S extends ArgsSpec> = { [K in keyof S]: S[K] extends Arg<infer T> ? T : never }

const absent = (value: unknown) => value === undefined || value === null
const shown = (value: unknown) => JSON.stringify(value) ?? String(value)

/** A required string; blank is refused unless `empty` (a file's content, an edit's replacement). */
function text(description: string, options: { empty?: boolean } = {}): Arg<string> {
  const wanted = options.empty ? "a string" : "a non-empty string"
  return {
    schema: { type: "string", description },
    required: true,
    read: (value) => {
      if (absent(value)) return new Problem("is required")
      if (typeof value !== "string") return new Problem(`must be ${wanted}, got ${shown(value)}`)
      if (!options.empty && value.trim() === "") return new Problem(`must be ${wanted}; it is blank`)
      return value
    },
  }
}

/** An optional string: left out, null or empty all mean "not given" (OpenCode marks every key required). */
function optionalText(description: string): Arg<string | undefined> {
  return {
    schema: { type: "string", description },
    required: false,
    read: (value) => {
      if (absent(value) || value === "") return undefined
      return typeof value === "string" ? value : new Problem(`must be a string, got ${shown(value)}`)
    },
  }
}

interface Bounds {
  minimum: number
  maximum?: number
}

function integerOf(value: unknown, bounds: Bounds): number | Problem {
  // Models often write numbers as strings; a string of digits is the number it spells.
  const number = typeof value === "string" && /^-?\d+$/.test(value.trim()) ? Number(value) : value
  const range =
    bounds.maximum === undefined ? `of at least ${bounds.minimum}` : `from ${bounds.minimum} to ${bounds.maximum}`
  if (
    typeof number !== "number" ||
    !Number.isInteger(number) ||
    number < bounds.minimum ||
    (bounds.maximum !== undefined && number > bounds.maximum)
  )
    return new Problem(`must be an integer ${range}, got ${shown(value)}`)
  return number
}

/**
 * An integer within bounds; left out (or null or empty), `fallback`. With `zeroIsUnset`, 0 is the
 * fallback too: shown every key as required, a model fills a count it does not care about with 0.
 */
function integer(description: string, bounds: Bounds & { fallback: number; zeroIsUnset?: boolean }): Arg<number> {
  return {
    schema: {
      type: "integer",
      description,
      minimum: bounds.minimum,
      ...(bounds.maximum === undefined ? {} : { maximum: bounds.maximum }),
    },
    required: false,
    read: (value) =>
      absent(value) || value === "" || (bounds.zeroIsUnset && (value === 0 || value === "0"))
        ? bounds.fallback
        : integerOf(value, bounds),
  }
}

/** A boolean that defaults to false; "true" and "false" as strings count. */
function flag(description: string): Arg<boolean> {
  return {
    schema: { type: "boolean", description },
    required: false,
    read: (value) => {
      if (absent(value) || value === "" || value === false || value === "false") return false
      if (value === true || value === "true") return true
      return new Problem(`must be true or false, got ${shown(value)}`)
    },
  }
}

export const arg = { text, optionalText, integer, flag }

export interface ToolSpec<S extends ArgsSpec> {
  name: string
  /** The tool's .md text, with any placeholders already filled in. */
  description: string
  args: S
  execute(args: ArgsOf<S>, context: ToolContext): Promise<string | ToolOutput>
}

/** A plugin tool as the plugin registers it: OpenCode's definition under its name. */
export interface PluginTool {
  name: string
  definition: ToolDefinition
  /** The arguments a call must give. */
  required: string[]
  /** The check `execute` applies first: the arguments as declared, or the Error the model gets. */
  parse(raw: unknown): Record<string, unknown>
}

/**
 * The call's arguments as the tool declared them, or an Error naming each wrong argument and what
 * to do. Keys the tool does not declare are dropped: OpenCode's built-ins ignore them too.
 */
export function parseArgs<S extends ArgsSpec>(spec: Pick<ToolSpec<S>, "name" | "args">, raw: unknown): ArgsOf<S> {
  const given = (typeof raw === "object" && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>
  const parsed: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [key, declared] of Object.entries(spec.args)) {
    const value = declared.read(given[key])
    if (value instanceof Problem) problems.push(`the "${key}" argument ${value.why} (${declared.schema.description})`)
    else parsed[key] = value
  }
  if (problems.length)
    throw new Error(
      `${spec.name}: ${problems.join("; ")}. Nothing was done; call ${spec.name} again with ` +
        `${problems.length > 1 ? "those arguments" : "that argument"} given as described.`,
    )
  return parsed as ArgsOf<S>
}

export function defineTool<S extends ArgsSpec>(spec: ToolSpec<S>): PluginTool {
  const schema: Record<string, JsonSchema> = {}
  for (const [key, declared] of Object.entries(spec.args)) schema[key] = declared.schema
  return {
    name: spec.name,
    definition: {
      description: spec.description.trim(),
      args: schema,
      execute: (raw, context) => spec.execute(parseArgs(spec, raw), context),
    },
    required: Object.keys(spec.args).filter((key) => spec.args[key]!.required),
    parse: (raw) => parseArgs(spec, raw),
  }
}

/** The plugin's `tool` hook value: each definition under its name. */
export const toolRecord = (tools: readonly PluginTool[]): Record<string, ToolDefinition> =>
  Object.fromEntries(tools.map((tool) => [tool.name, tool.definition]))
