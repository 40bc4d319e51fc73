// What a session did, read back from its messages: the last answer, steps, tokens, cost, the model
// that answered, each tool call with its target, the error if it ended on one, and the bytes it moved.
import type { OpencodeClient, Part, ToolPart } from "@opencode-ai/sdk/v2"
import { describeError, unwrap, type ModelRoute, type SessionError } from "./session"

export interface ToolCall {
  tool: string
  status: string
  /** A short description of what it acted on: a path, a pattern, a command. */
  target: string
  exitCode?: number
  error?: string
}

/** A step-finish part: what one model step cost, by the part's id. */
export interface FinishedStep {
  id: string
  tokens: Transcript["tokens"]
  cost: number
}

export interface Transcript {
  text: string
  steps: number
  /** Each finished step's spending, so a takeover can count the ones nobody saw (engine/records/usage.ts). */
  finished: FinishedStep[]
  tokens: { input: number; output: number; reasoning: number; cacheRead: number; cacheWrite: number }
  cost: number
  route?: ModelRoute
  tools: ToolCall[]
  error?: string
  /** The last assistant message's error object, for classifying the failure (engine/turn/failure.ts). */
  fault?: SessionError
  finish?: string
  messages: number
  /**
   * UTF-8 bytes of what the agent read and wrote (text, reasoning, tool inputs and outputs): what the parent never had
   * to hold.
   */
  bytes: number
}

export function toolTarget(part: ToolPart): string {
  const input = part.state.input as Record<string, unknown>
  const value = input.filePath ?? input.path ?? input.pattern ?? input.command ?? input.url ?? input.description
  return typeof value === "string" ? value.slice(0, 200) : ""
}

/** Reads the session's messages after `afterMessageID` (the whole session when omitted). */
export async function readTranscript(
  client: OpencodeClient,
  sessionID: string,
  directory: string,
  afterMessageID?: string,
): Promise<Transcript> {
  const all = unwrap(await client.session.messages({ sessionID, directory }), "list the session's messages")
  const start = afterMessageID ? all.findIndex((m) => m.info.id === afterMessageID) + 1 : 0
  const messages = all.slice(start)
  const transcript: Transcript = {
    text: "",
    steps: 0,
    finished: [],
    tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    cost: 0,
    tools: [],
    messages: messages.length,
    bytes: 0,
  }
  for (const { info, parts } of messages) {
    transcript.bytes += partBytes(parts)
    if (info.role !== "assistant") continue
    transcript.cost += info.cost
    transcript.tokens.input += info.tokens.input
    transcript.tokens.output += info.tokens.output
    transcript.tokens.reasoning += info.tokens.reasoning
    transcript.tokens.cacheRead += info.tokens.cache.read
    transcript.tokens.cacheWrite += info.tokens.cache.write
    transcript.route = { providerID: info.providerID, modelID: info.modelID, variant: info.variant }
    transcript.finish = info.finish
    transcript.error = info.error ? describeError(info.error) : undefined
    transcript.fault = info.error
    const text = answerText(parts)
    if (text) transcript.text = text
    for (const part of parts) {
      if (part.type === "step-finish") {
        transcript.steps++
        const { input, output, reasoning, cache } = part.tokens
        transcript.finished.push({
          id: part.id,
          tokens: { input, output, reasoning, cacheRead: cache.read, cacheWrite: cache.write },
          cost: part.cost,
        })
      }
      if (part.type === "tool") transcript.tools.push(summarizeTool(part))
    }
  }
  return transcript
}

const utf8 = (text: string | undefined) => (text ? Buffer.byteLength(text) : 0)

/** Bytes of a message's content: text and reasoning, and each tool call's input and output (or error). */
function partBytes(parts: Part[]): number {
  let bytes = 0
  for (const part of parts) {
    if (part.type === "text" || part.type === "reasoning") bytes += utf8(part.text)
    if (part.type !== "tool") continue
    bytes += utf8(JSON.stringify(part.state.input ?? {}))
    if (part.state.status === "completed") bytes += utf8(part.state.output)
    if (part.state.status === "error") bytes += utf8(part.state.error)
  }
  return bytes
}

/** The text an answer shows (not synthetic or ignored parts), trimmed: what a report is read from. */
export const answerText = (parts: Part[]) =>
  parts
    .filter((part): part is Extract<Part, { type: "text" }> => part.type === "text" && !part.synthetic && !part.ignored)
    .map((part) => part.text)
    .join("\n")
    .trim()

function summarizeTool(part: ToolPart): ToolCall {
  const call: ToolCall = { tool: part.tool, status: part.state.status, target: toolTarget(part) }
  const metadata = "metadata" in part.state ? (part.state.metadata as Record<string, unknown> | undefined) : undefined
  const exit = metadata?.exit ?? metadata?.exitCode
  if (typeof exit === "number") call.exitCode = exit
  if (part.state.status === "error") call.error = part.state.error.slice(0, 300)
  return call
}
