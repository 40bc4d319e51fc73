// The script format the scripted model replays: JSON a person can write, validated by one schema.
// A script is a list of user turns; each turn is the list of model steps answered after that user
// message. Step N of a turn answers the request that already holds N assistant messages after the
// user's message, so replay needs no state beyond which injected failures have fired.
import { z } from "zod"
import { fail } from "../errors"
import demo from "./scripts/demo.json"

const args = z.record(z.string(), z.unknown()).describe("The tool's arguments, sent as the call's JSON `arguments`.")

const ToolCallSchema = z
  .object({
    tool: z
      .string()
      .min(1)
      .describe("Tool name as OpenCode offers it (read, grep, glob, bash, edit, write, or a plugin tool)."),
    args: args.default({}),
  })
  .strict()

const FailureSchema = z
  .object({
    kind: z
      .enum(["429", "500", "cut", "401", "quota", "unknown_model", "context", "503"])
      .describe(
        "429: rate limited (with retry-after); 500: server error; cut: the stream closes mid-answer without " +
          "[DONE]; 401: bad API key; quota: a 429 saying the quota is spent; unknown_model: a 404 for the model; " +
          "context: a 400 saying the prompt is over the context length; 503: overloaded.",
      ),
    times: z
      .union([z.number().int().positive(), z.literal("always")])
      .default(1)
      .describe("How many attempts of this step fail before one succeeds (per session), or always."),
    retryAfterSeconds: z.number().min(0).max(60).default(0).describe("The retry-after header of a 429."),
    model: z
      .string()
      .min(1)
      .optional()
      .describe("Only requests for this model id fail (a provider refusing one route); others play the step."),
    per: z
      .enum(["session", "server"])
      .default("session")
      .describe(
        "What `times` counts in: each session's attempts, or every attempt at this step on the server (so a new " +
          "session for the same brief can get through).",
      ),
  })
  .strict()

const common = {
  delayMs: z
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .optional()
    .describe("Latency: a streamed answer sends its first chunk, then waits this long before the rest."),
  fail: FailureSchema.optional().describe("An injected failure before the step is answered."),
  reasoning: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Hidden reasoning streamed before the step's text or tool calls, as `reasoning_content` deltas (how " +
        "OpenAI-compatible providers send thinking).",
    ),
}

const StepSchema = z.union([
  z.object({ ...ToolCallSchema.shape, ...common }).strict(),
  z.object({ tools: z.array(ToolCallSchema).min(1).describe("Parallel tool calls in one step."), ...common }).strict(),
  z
    .object({
      text: z
        .string()
        .describe(
          "Final text. {{lastToolOutput}}, {{lastTaskId}}, {{toolOutputs}} and {{userMessage}} are filled in " +
            "from the request (in a tool call's string arguments too).",
        ),
      ...common,
    })
    .strict(),
])

const TurnSchema = z
  .object({ steps: z.array(StepSchema).min(1).describe("Model steps answered after one user message.") })
  .strict()

const ScriptSchema = z
  .object({
    description: z.string().optional(),
    turns: z.array(TurnSchema).min(1).describe("One entry per user message of a session, in order."),
  })
  .strict()

/** A script file: named scripts, or a single script (registered under the file's default name). */
const ScriptSetSchema = z
  .object({
    scripts: z
      .record(z.string().regex(/^[\w.-]+$/), ScriptSchema)
      .describe("Scripts by name, as [script:NAME] picks them."),
  })
  .strict()

export type ToolCall = z.infer<typeof ToolCallSchema>
export type Failure = z.infer<typeof FailureSchema>
export type Step = z.infer<typeof StepSchema>
export type Script = z.infer<typeof ScriptSchema>
export type ScriptInput = z.input<typeof ScriptSchema>

export const DEFAULT_SCRIPT = "demo"

/** The scripts every server knows: the demo (grep, read, then a report quoting what was read). */
export function builtinScripts(): Record<string, Script> {
  return { [DEFAULT_SCRIPT]: ScriptSchema.parse(demo) }
}

export function parseScript(input: unknown): Script {
  return ScriptSchema.parse(input)
}

/** Reads a script file's JSON text; a single script is registered as `fallbackName`. */
export function parseScriptFile(text: string, source: string, fallbackName = DEFAULT_SCRIPT): Record<string, Script> {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw fail(
      "Usage",
      `${source} is not JSON: ${(error as Error).message}`,
      "Write the script as JSON (see src/model/script.ts).",
    )
  }
  const named = typeof json === "object" && json !== null && "scripts" in json
  const parsed = named ? ScriptSetSchema.safeParse(json) : ScriptSchema.safeParse(json)
  if (!parsed.success)
    throw fail(
      "Usage",
      `${source} is not a valid script:\n${explain(parsed.error.issues).join("\n")}`,
      "Fix the fields named above.",
    )
  return "scripts" in parsed.data ? parsed.data.scripts : { [fallbackName]: parsed.data }
}

type Issue = z.core.$ZodIssue

/**
 * One line per problem, with its path. A step is a union, and zod reports a bad step as "Invalid
 * input" with every branch's complaints: show the branch that came closest instead.
 */
function explain(issues: readonly Issue[], base: PropertyKey[] = []): string[] {
  return issues.flatMap((issue) => {
    const path = [...base, ...issue.path]
    if (issue.code !== "invalid_union" || issue.errors.length === 0)
      return [`  at ${path.join(".") || "(top)"}: ${issue.message}`]
    const sizes = issue.errors.map((branch) => branch.length)
    const best = Math.min(...sizes)
    if (sizes.filter((size) => size === best).length === 1)
      return explain(issue.errors[sizes.indexOf(best)] ?? [], path)
    return [
      `  at ${path.join(".")}: expected a step {tool, args}, {tools: [...]} or {text}`,
      ...explain(issue.errors[0]?.filter((e) => e.path.length === 0) ?? [], path),
    ]
  })
}

/** The tool calls of a step, or none for a text step. */
export function callsOf(step: Step): ToolCall[] {
  if ("tools" in step) return step.tools
  if ("tool" in step) return [{ tool: step.tool, args: step.args }]
  return []
}
