// The permission relay on the MCP side: while a delegating tool call waits in the foreground, a
// delegated session's permission asks and questions are put to the person through the parent's
// client (`elicitation/create`, in the call's own request context). Only for a client that declared
// `elicitation`; each ask waits a bounded time; once the call has returned (`running`, a background
// task) the relay is detached and every later ask is refused with that reason. Which asks can arise
// at all is config.json's policy.relay (src/agents/render.ts). What a form shows is bounded
// (src/policy/relay-bounds.ts), and so is how many are open at once (relay-gate.ts).
import {
  SdkError,
  SdkErrorCode,
  type ElicitRequestFormParams,
  type ElicitResult,
  type PrimitiveSchemaDefinition,
} from "@modelcontextprotocol/server"
import type { Ask } from "../policy/asks"
import { describeAsk, type Relay, type Verdict } from "../policy/relay"
import { agentLabel, shownAsk } from "../policy/relay-bounds"
import type { Peer } from "./define"
import type { AskLedger, RelayGate } from "./relay-gate"
import type { Extra } from "./replies"

/** Why an ask went unanswered when the client left: the reason serve gives the asks it withdraws then. */
const CLIENT_CLOSED = "the MCP client that could put it to the person closed"

/** How long one ask waits for the person at most (also bounded by what is left of the call's budget). */
export const RELAY_WAIT_MS = 60_000

export interface ForegroundRelay {
  relay: Relay
  /** The task's count of asks, to file under its id once it has one (RelayGate.remember). */
  ledger: AskLedger
  /** The call has returned: asks from now on are refused, and one still open is withdrawn. */
  detach(): void
}

export interface RelayOptions {
  /** Epoch ms when the call stops waiting in the foreground (its sync budget). */
  until: number
  /** The bound on one ask (default RELAY_WAIT_MS), its wait for a free form included. */
  waitMs?: number
  /** The task's asks so far (task_continue); a new task starts a fresh count. */
  ledger?: AskLedger
}

/** A relay for this call, or undefined when the client cannot ask the person (no elicitation). */
export function foregroundRelay(peer: Peer, extra: Extra, options: RelayOptions): ForegroundRelay | undefined {
  if (!peer.elicits) return undefined
  return relayThrough(
    peer.gate,
    {
      put: (params, sending) => extra.mcpReq.elicitInput(params, sending),
      // A call's signal aborts when it is cancelled, and when its connection closes (the SDK aborts every open
      // request).
      signal: extra.mcpReq.signal,
      connected: peer.connected,
    },
    options,
  )
}

/** How a relay reaches the person: a request to the client (2025) or a round of input_required (input-rounds.ts). */
export interface RelayChannel {
  /** Puts the form to the person; resolves with what they did, rejects when it could not be put or answered. */
  put(params: ElicitRequestFormParams, sending: { timeout: number; signal: AbortSignal }): Promise<ElicitResult>
  /** Aborts when the call that waits on the task is cancelled or its client left. */
  signal: AbortSignal
  connected(): boolean
}

/** The relay over one channel: bounded by `gate` and the task's ledger, each ask by its wait. */
export function relayThrough(gate: RelayGate, channel: RelayChannel, options: RelayOptions): ForegroundRelay {
  const detached = new AbortController()
  const { signal } = channel
  const ledger = options.ledger ?? gate.ledger()
  const ended = (cancelled: string) => unreachable(channel.connected() ? cancelled : CLIENT_CLOSED)
  const relay: Relay = async (ask, asking) => {
    if (detached.signal.aborted) return unreachable("the call had returned; no one to ask")
    if (signal.aborted) return ended("the call was cancelled; no one to ask")
    const deadline = Date.now() + Math.min(options.waitMs ?? RELAY_WAIT_MS, options.until - Date.now())
    if (deadline <= Date.now()) return unreachable("the call's wait was spent; no one to ask")
    const seconds = Math.round((deadline - Date.now()) / 1000)
    const entry = await gate.enter(
      ledger,
      AbortSignal.any([detached.signal, signal, AbortSignal.timeout(deadline - Date.now())]),
    )
    if ("refused" in entry) {
      if (entry.refused !== "aborted") return { kind: "refused", reason: entry.refused, unasked: true }
      if (detached.signal.aborted)
        return unreachable("the call had returned while the ask waited for a free form; no one to ask")
      if (signal.aborted) return ended("the call was cancelled while the ask waited for a free form")
      return refused(`no answer from the person within ${seconds}s (the ask waited behind others for a free form)`)
    }
    try {
      const timeout = deadline - Date.now()
      if (timeout <= 0)
        return refused(`no answer from the person within ${seconds}s (the ask waited behind others for a free form)`)
      asking()
      const result = await channel.put(elicitation(ask), {
        timeout,
        signal: AbortSignal.any([detached.signal, signal]),
      })
      return verdictOf(ask, result)
    } catch (error) {
      if (detached.signal.aborted) return unreachable("the call had returned before the person answered; no one to ask")
      if (signal.aborted) return ended("the call was cancelled before the person answered")
      if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
        return refused(`no answer from the person within ${seconds}s`)
      return unreachable(
        `the client could not ask the person: ${error instanceof Error ? error.message : String(error)}`,
      )
    } finally {
      entry.release()
    }
  }
  return { relay, ledger, detach: () => detached.abort() }
}

const refused = (reason: string): Verdict => ({ kind: "refused", reason })
/** No person can be reached this way: a question may then wait for task_respond (engine/turn/inbox.ts). */
const unreachable = (reason: string): Verdict => ({ kind: "refused", reason, unreachable: true })

/** Field names of a question's answers in the form: q1, q2, … */
const field = (index: number) => `q${index + 1}`

/**
 * What the person sees: one line for a permission (accept or decline), a choice per question; bounded, saying what it
 * clipped.
 */
export function elicitation(ask: Ask): ElicitRequestFormParams {
  const shown = shownAsk(ask)
  const clipped = shown.clipped.length ? ` (Clipped for this form: ${shown.clipped.join("; ")}.)` : ""
  if (shown.ask.kind === "permission")
    return {
      mode: "form",
      message:
        `A delegated OpenCode agent asks for ${describeAsk(shown.ask)}. Accept to allow it once; decline to ` +
        `refuse.${clipped}`,
      requestedSchema: { type: "object", properties: {} },
    }
  const properties: Record<string, PrimitiveSchemaDefinition> = {}
  shown.ask.questions.forEach((question, index) => {
    const labels = question.options.map((option) => option.label)
    const description = [
      question.question,
      ...question.options.map((option) => `${option.label}: ${option.description}`),
    ].join("\n")
    properties[field(index)] = !labels.length
      ? { type: "string", title: question.header, description }
      : question.multiple
        ? { type: "array", title: question.header, description, items: { type: "string", enum: labels } }
        : { type: "string", title: question.header, description, enum: labels }
  })
  return {
    mode: "form",
    message: `A delegated OpenCode agent asks: ${describeAsk(shown.ask)}${clipped}`,
    requestedSchema: { type: "object", properties, required: Object.keys(properties) },
  }
}

/**
 * The person's reply as a verdict: accept grants or answers (in the agent's own labels; a question
 * the form left out is unanswered); decline, cancel or a missing answer refuses.
 */
export function verdictOf(ask: Ask, result: ElicitResult): Verdict {
  if (result.action === "decline") return refused("the person declined")
  if (result.action !== "accept") return unreachable("the person dismissed the ask")
  if (ask.kind === "permission") return { kind: "granted" }
  const shown = shownAsk(ask)
  const answers = ask.questions.map((_, index) => {
    const value = index < shown.labels.length ? result.content?.[field(index)] : undefined
    if (Array.isArray(value)) return value.map((picked) => agentLabel(shown, index, String(picked)))
    return value === undefined || value === "" ? [] : [agentLabel(shown, index, String(value))]
  })
  if (answers.every((answer) => answer.length === 0)) return refused("the person accepted without answering")
  return { kind: "answered", answers }
}
