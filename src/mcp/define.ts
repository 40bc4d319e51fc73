// One declaration per MCP tool: its name, the .md description, input and output schemas, annotations,
// and a `run` that answers or throws. Every tool is called one way (callTool): its arguments checked
// against its input schema, with each wrong field said as "field: problem" and a next step; the answer
// becomes text plus structured content, a throw becomes `isError` with its `next:` line (errorResult),
// so a failure reads the same from every tool and no handler formats one itself. The engine behind the
// tools is loaded with the first call (Backend): a server that only listed its tools never loaded it.
import {
  type CallToolResult,
  type InputRequiredResult,
  isInputRequiredResult,
  type Tool,
  type ToolAnnotations,
} from "@modelcontextprotocol/server"
import { z } from "zod"
import type { Delegations } from "../engine/lifecycle"
import { fail } from "../errors"
import type { RoundState } from "./request-state"
import type { RelayGate } from "./relay-gate"
import { errorResult, type Extra, type Reply } from "./replies"

/** The engine's surface (src/engine/index.ts) as a value: what a tool's `run` calls beyond terms.ts. */
export type Engine = typeof import("../engine")

/** What the tools run on: the engine's surface and the delegations built on it. */
export interface Backend {
  engine: Engine
  delegations: Delegations
}

/** Gives the backend, loading and building it on the first call (serve.ts); the same one after. */
export type OpenBackend = () => Promise<Backend>

/** The client behind one call, as the tools need it: who it is and what it can do while the call waits. */
export interface Peer {
  /** The client's name (its own clientInfo), which picks the sync budget (engine/limits). */
  name: string | undefined
  /** It can put a form to the person in the middle of this call (elicitation on a 2025 revision). */
  elicits: boolean
  /**
   * On 2026-07-28, a client that can put a form to the person: the call's asks go out as rounds of `input_required`
   * (input-rounds.ts), bound to this tool; `state` is the round this call continues, sealed and checked by the SDK.
   */
  rounds?: { tool: string; state?: RoundState }
  /** Whether the connection is still open: a cancelled call on a closing one is not a cancelled task. */
  connected(): boolean
  /** How many asks reach the person at once, for this connection. */
  gate: RelayGate
}

/** What a call runs with: its client, the backend, the request. */
export interface ToolContext extends Backend {
  peer: Peer
  extra: Extra
}

/** The arguments as a tool's `run` reads them: each key of its input shape, parsed. */
export type ShapeOutput<Shape extends z.ZodRawShape> = { [K in keyof Shape]: OutputOf<Shape[K]> }
/** Distributes over a union of schemas (a shape built from optional spreads). */
type OutputOf<S> = S extends z.ZodType ? z.output<S> : never

export interface ToolDefinition<Input extends z.ZodRawShape, Output extends z.ZodRawShape> {
  name: string
  title: string
  description: string
  input: Input
  output: Output
  annotations: ToolAnnotations
  _meta?: Record<string, unknown>
  /**
   * Answers, or throws an AppError whose hint becomes the `next:` line; a delegating call may instead hand the
   * person's asks to the client (`input_required`, input-rounds.ts).
   */
  run(
    args: ShapeOutput<Input>,
    context: ToolContext,
  ): Promise<Reply<z.output<z.ZodObject<Output>>> | InputRequiredResult>
}

/** A tool as the server calls and lists it; the schemas stay inside, checked where they are declared. */
export interface McpTool {
  name: string
  /** Checks the arguments, runs, and answers; never throws. */
  call(
    args: unknown,
    context: Omit<ToolContext, keyof Backend>,
    open: OpenBackend,
  ): Promise<CallToolResult | InputRequiredResult>
  /** The tool as tools/list describes it (scripts/tools-list.ts writes the list from these). */
  listing(): Tool
}

export function defineTool<Input extends z.ZodRawShape, Output extends z.ZodRawShape>(
  tool: ToolDefinition<Input, Output>,
): McpTool {
  const input = z.object(tool.input)
  const output = z.object(tool.output)
  return {
    name: tool.name,
    async call(args, context, open) {
      try {
        const parsed = input.safeParse(args ?? {})
        if (!parsed.success) throw invalidArguments(tool.name, parsed.error)
        const backend = await open()
        const reply = await tool.run(parsed.data as ShapeOutput<Input>, { ...context, ...backend })
        if (isInputRequiredResult(reply)) return reply
        // What a client checks the answer against, checked here first: a mismatch is our defect, said as one.
        const checked = output.safeParse(reply.structured)
        if (!checked.success)
          throw new Error(
            `Output validation error: ${tool.name}'s answer breaks its output schema: ${issuesOf(checked.error)}`,
          )
        return toResult(reply)
      } catch (error) {
        return errorResult(error)
      }
    },
    listing: () => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: leanInput(jsonSchemaOf(input, "input")),
      annotations: tool.annotations,
      ...(tool._meta ? { _meta: tool._meta } : {}),
      outputSchema: jsonSchemaOf(output, "output"),
    }),
  }
}

/** Each wrong field as "field: problem". */
const issueLines = (error: z.ZodError) =>
  error.issues.map((issue) => {
    const at = issue.path.map(String).join(".")
    return `${at ? `${at}: ` : ""}${issue.message}`
  })

const issuesOf = (error: z.ZodError) => issueLines(error).join("; ")

/** Each wrong field on its own line, with the way to the schema. */
function invalidArguments(name: string, error: z.ZodError) {
  const lines = issueLines(error).map((line) => `  - ${line}`)
  return fail(
    "Usage",
    `Invalid arguments for ${name}:\n${lines.join("\n")}`,
    `Fix the argument${lines.length > 1 ? "s" : ""} above; tools/list gives ${name}'s schema.`,
  )
}

/** A reply as the wire carries it. */
export function toResult(reply: Reply<Record<string, unknown>>): CallToolResult {
  return {
    content: [{ type: "text", text: reply.text }],
    structuredContent: reply.structured,
    ...(reply.failed === undefined ? {} : { isError: reply.failed }),
  }
}

/**
 * A schema as JSON Schema without its dialect line: each client hands its model the input schemas on every turn, and
 * the line is 52 bytes a tool. A schema without it reads as 2020-12 on 2025-11-25 and later; these schemas use
 * no tuples, definitions or exclusive bounds, where draft-07 and 2020-12 differ, so the draft-07 text is the
 * same schema (test/mcp/listed.test.ts holds the list to that).
 */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Tool["inputSchema"] {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: "draft-7", io }) as Record<string, unknown>
  return rest as Tool["inputSchema"]
}

/**
 * An input schema as lean as its meaning allows: without `minLength: 1` on strings (14 bytes each, 47 of them: a
 * required argument is not empty to any reader, and the zod schema still refuses an empty one with its next step).
 * Output schemas are not handed to the model and keep everything.
 */
function leanInput<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(leanInput) as T
  if (!schema || typeof schema !== "object") return schema
  const entries = Object.entries(schema).filter(([key, value]) => !(key === "minLength" && value === 1))
  return Object.fromEntries(entries.map(([key, value]) => [key, leanInput(value)])) as T
}
