// Decides what the scripted model answers to one request. Pure: the scripts and a request in, the
// reply (and the step it came from) out. The server adds latency, failures and the wire format.
import {
  fillArguments,
  fillTemplate,
  isTitleRequest,
  positionOf,
  scriptMarker,
  templateValues,
  textOf,
  type ChatRequest,
} from "./conversation"
import type { Reply } from "./reply"
import { callsOf, type Script, type Step } from "./script"

export type Play =
  | { kind: "title"; reply: Reply }
  | {
      kind: "step"
      script: string
      turn: number
      step: number
      /** The step was played in place of a tool step because OpenCode asked for text only. */
      maxSteps: boolean
      definition: Step
      reply: Reply
    }
  /** No such script or step: a text answer saying so, so the session ends visibly instead of hanging. */
  | { kind: "missing"; script: string; turn: number; step: number; reply: Reply }

const textReply = (text: string): Reply => ({ text, calls: [] })

/** A short title from the user's words, the way a small model would answer the title generator. */
function titleFor(request: ChatRequest): string {
  const user =
    request.messages
      .filter((m) => m.role === "user")
      .map(textOf)
      .at(-1) ?? ""
  const words = user
    .replace(/\[script:[^\]]*\]/g, "")
    .replace(/["'`]/g, "")
    .split(/\s+/)
    .filter(Boolean)
  const title = words.slice(0, 6).join(" ").slice(0, 50)
  return title || "Scripted session"
}

function replyFor(definition: Step, request: ChatRequest, callId: (index: number) => string): Reply {
  const reasoning = definition.reasoning ? { reasoning: definition.reasoning } : {}
  if ("text" in definition)
    return { ...textReply(fillTemplate(definition.text, templateValues(request))), ...reasoning }
  const values = templateValues(request)
  const calls = callsOf(definition).map((call, index) => ({
    id: callId(index),
    name: call.tool,
    arguments: JSON.stringify(fillArguments(call.args, values)),
  }))
  return { text: "", calls, ...reasoning }
}

/**
 * `session` makes tool-call ids unique per conversation (OpenCode's `x-session-id`, or any stable key),
 * so results from concurrent sessions playing the same script stay apart.
 */
export function decide(
  scripts: ReadonlyMap<string, Script>,
  defaultScript: string,
  request: ChatRequest,
  session = "",
): Play {
  if (isTitleRequest(request)) return { kind: "title", reply: textReply(titleFor(request)) }
  const name = scriptMarker(request) ?? defaultScript
  const { turn, step, maxSteps } = positionOf(request)
  const script = scripts.get(name)
  if (!script) {
    const known = [...scripts.keys()].join(", ")
    return {
      kind: "missing",
      script: name,
      turn,
      step,
      reply: textReply(`[scripted-model] no script named "${name}" (known: ${known}).`),
    }
  }
  const steps = script.turns[turn]?.steps
  let index = step
  // On the last allowed step a tool call would be refused: jump to the turn's final text instead.
  const planned = steps?.[index]
  if (maxSteps && steps && !(planned && "text" in planned)) {
    const text = steps.findLastIndex((s) => "text" in s)
    if (text < 0)
      return { kind: "missing", script: name, turn, step, reply: textReply("[scripted-model] maximum steps reached.") }
    index = text
  }
  const definition = steps?.[index]
  if (!definition) {
    const where = steps ? `step ${step + 1} of turn ${turn + 1}` : `turn ${turn + 1}`
    return {
      kind: "missing",
      script: name,
      turn,
      step,
      reply: textReply(`[scripted-model] script "${name}" has no ${where}.`),
    }
  }
  return {
    kind: "step",
    script: name,
    turn,
    step: index,
    maxSteps: index !== step,
    definition,
    reply: replyFor(definition, request, (call) => `call_${session ? `${session}_` : ""}${turn}_${index}_${call}`),
  }
}
