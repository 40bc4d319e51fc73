// Headless sessions must never wait for a person who is not there: a permission request or a question
// from a delegated session is put to the person only through a relay (the parent's MCP client, while
// its tool call waits: src/mcp/relay.ts); without one, or when no one answers, it is rejected (the
// agent's own rules already allow what its role may do) with the reason. OpenCode 1.18 never calls a
// plugin's `permission.ask`, so this is answered over the API from the event stream.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import type { Ask } from "../policy/asks"
import { describeAsk, describeVerdict, NO_ELICITATION, type Relay, type Verdict } from "../policy/relay"
import type { Event } from "./client"

export type Answered = Ask & { verdict: Verdict }

const UNATTENDED = "Delegated sessions run unattended"
const NEXT = "Work within the tools your role allows, or report what you needed."

/** Answers a permission or question ask by the relay, else refuses it; undefined for any other event. */
export async function answerAsk(
  client: OpencodeClient,
  directory: string,
  event: Event,
  relay?: Relay,
  onProgress: (line: string) => void = () => {},
): Promise<Answered | undefined> {
  if (event.type !== "permission.asked" && event.type !== "question.asked") return undefined
  const ask = askOf(event)
  const verdict: Verdict = relay
    ? await relay(ask, () => onProgress(`asked the person: ${describeAsk(ask)}`)).catch((error: unknown) => ({
        kind: "refused" as const,
        reason: `the relay failed: ${String(error)}`,
      }))
    : NO_ELICITATION
  const requestID = event.properties.id
  // Each reply below drops its error: a request already answered (or its session gone) needs no
  // answer, and the run cannot hang on it.
  if (ask.kind === "permission") {
    const granted = verdict.kind === "granted"
    const message = granted ? undefined : `${UNATTENDED}: this was refused by policy (${reasonOf(verdict)}). ${NEXT}`
    await client.permission
      .reply({ requestID, directory, reply: granted ? "once" : "reject", message })
      // As above: already answered or gone.
      .catch(() => undefined)
  } else if (verdict.kind === "answered") {
    // As above: already answered or gone.
    await client.question.reply({ requestID, directory, answers: verdict.answers }).catch(() => undefined)
  } else if (verdict.kind === "refused" && verdict.unasked) {
    // A bound kept it from the person: the reject API carries no message, so the reason is the answer
    // the agent reads, marked as not the person's.
    const answers = ask.questions.map(() => [`[not put to the person: ${verdict.reason}]`])
    await client.question.reply({ requestID, directory, answers }).catch(() => undefined)
  } else {
    // As above. The reject API carries no message: the agent reads "dismissed"; the reason is in progress.
    await client.question.reject({ requestID, directory }).catch(() => undefined)
  }
  onProgress(progressLine(ask, verdict))
  return { ...ask, verdict }
}

function askOf(event: Extract<Event, { type: "permission.asked" | "question.asked" }>): Ask {
  if (event.type === "permission.asked")
    return { kind: "permission", permission: event.properties.permission, patterns: event.properties.patterns }
  return { kind: "question", questions: event.properties.questions }
}

const reasonOf = (verdict: Verdict) => (verdict.kind === "refused" ? verdict.reason : "")

function progressLine(ask: Ask, verdict: Verdict): string {
  if (verdict.kind === "refused") return `refused a ${ask.kind} request (${describeAsk(ask)}): ${verdict.reason}`
  if (verdict.kind === "answered" && verdict.by) return `answered through ${verdict.by}: ${describeVerdict(verdict)}`
  return `the person answered: ${describeVerdict(verdict)}`
}
