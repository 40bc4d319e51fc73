// One declaration per MCP tool: its name, the .md description, input and output schemas, annotations,
// and a `run` that answers or throws. Registration is one wrapper for every tool: the answer becomes
// text plus structured content, a throw becomes `isError` with its `next:` line (errorResult), so a
// failure reads the same from every tool and no handler formats one itself. The engine behind the
// tools is loaded with the first call (Backend): a server that only listed its tools never loaded it.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { ShapeOutput, ZodRawShapeCompat } from "@modelcontextprotocol/sdk/server/zod-compat.js"
import type { CallToolResult, ListToolsResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import type { z } from "zod"
import type { Delegations } from "../engine/lifecycle"
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

/** What a call runs with: the server it came through (client name, relay), the backend, the request. */
export interface ToolContext extends Backend {
  server: McpServer
  extra: Extra
}

export interface ToolDefinition<Input extends z.ZodRawShape, Output extends z.ZodRawShape> {
  name: string
  title: string
  description: string
  input: Input
  output: Output
  annotations: ToolAnnotations
  _meta?: Record<string, unknown>
  /** Answers, or throws an AppError whose hint becomes the `next:` line. */
  run(args: ShapeOutput<Input>, context: ToolContext): Promise<Reply<z.output<z.ZodObject<Output>>>>
}

/** A tool as server.ts registers it; the schemas stay inside, checked where they are declared. */
export interface McpTool {
  name: string
  register(server: McpServer, open: OpenBackend): void
}

export function defineTool<Input extends z.ZodRawShape, Output extends z.ZodRawShape>(
  tool: ToolDefinition<Input, Output>,
): McpTool {
  return {
    name: tool.name,
    register(server, open) {
      const config = {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: tool.annotations,
        ...(tool._meta ? { _meta: tool._meta } : {}),
      }
      // Registered as any shape: the SDK's callback type does not resolve for a generic one. The SDK
      // parses the arguments with `tool.input` before the call, so they are what run declares.
      server.registerTool<ZodRawShapeCompat, ZodRawShapeCompat>(tool.name, config, async (args, extra) => {
        try {
          const backend = await open()
          return toResult(await tool.run(args as ShapeOutput<Input>, { server, ...backend, extra }))
        } catch (error) {
          return errorResult(error)
        }
      })
    },
  }
}

/** A reply as the wire carries it (also for a native task's result, tasks.ts). */
export function toResult(reply: Reply<Record<string, unknown>>): CallToolResult {
  return {
    content: [{ type: "text", text: reply.text }],
    structuredContent: reply.structured,
    ...(reply.failed === undefined ? {} : { isError: reply.failed }),
  }
}

/**
 * The listed tools as lean as their meaning allows, since each client hands its model the input schemas
 * on every turn: without the JSON Schema dialect line the SDK writes into every schema (52 bytes each;
 * draft-07 is what a schema without it means to the SDK's own validator, and what clients assume), and
 * without `minLength: 1` on input strings (14 bytes each, 47 of them: a required argument is not empty to
 * any reader, and the server's zod schema still refuses an empty one with its next step). Output schemas
 * are not handed to the model and keep everything but the dialect line.
 */
export function leanListing(listed: ListToolsResult): ListToolsResult {
  const bare = <T>(schema: T): T => {
    if (!schema || typeof schema !== "object" || !("$schema" in schema)) return schema
    const { $schema: _, ...rest } = schema as Record<string, unknown>
    return rest as T
  }
  const tools = listed.tools.map((tool) => ({
    ...tool,
    inputSchema: withoutEmptyBound(bare(tool.inputSchema)),
    ...(tool.outputSchema ? { outputSchema: bare(tool.outputSchema) } : {}),
  }))
  return { ...listed, tools }
}

/** A JSON Schema of our own tools (never model text) with every `minLength: 1` left out. */
function withoutEmptyBound<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(withoutEmptyBound) as T
  if (!schema || typeof schema !== "object") return schema
  const entries = Object.entries(schema).filter(([key, value]) => !(key === "minLength" && value === 1))
  return Object.fromEntries(entries.map(([key, value]) => [key, withoutEmptyBound(value)])) as T
}
