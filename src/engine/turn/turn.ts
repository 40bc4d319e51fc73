// One turn of a delegation on the shared OpenCode server: create the session (or reuse the task's),
// send the brief, follow the session to idle through the event hub while answering every permission
// or question ask (by the person through the relay, else by policy), and read back what it did. An
// empty final answer gets one continuation asking for the report. Cleanup (remove, park, preserve) belongs to the task
// lifecycle.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import type { Event, EventHub } from "../../opencode/client"
import { answerAsk } from "../../opencode/policy"
import type { Relay } from "../../policy/relay"
import {
  abortSession,
  createSession,
  lastMessageID,
  restrictEdits,
  sendPrompt,
  settleAfterAbort,
  waitIdle,
  type ModelRoute,
  type WaitOutcome,
} from "../../opencode/session"
import { openAskOf, withdrawPending, type OpenAsk } from "../../opencode/pending"
import { readTranscript, type Transcript } from "../../opencode/transcript"
import { activityOf, describeEvent, newTracker } from "./progress"
import {
  type Activity,
  type Status,
  addStep,
  openSegment,
  overCap,
  seedSegment,
  totalOf,
  type Caps,
  type Spending,
} from "../records"
import { refusalOf } from "./fallback"

const EMPTY_REPORT_NUDGE =
  "Your last message did not contain the report. Do not call any more tools. Write the final report now, in the " +
  "format your instructions give."

export interface TurnSpec {
  client: OpencodeClient
  hub: EventHub
  workspace: string
  agent: string
  title: string
  route?: ModelRoute
  /** A user role's prompt, sent with every message as system text beside the agent's own. */
  system?: string
  /** Epoch ms: the session is aborted then. */
  deadline: number
  signal: AbortSignal
  /** A scoped worker's paths (src/workspace/scope.ts): the session's own rules deny file-tool edits elsewhere. */
  scope?: readonly string[]
  /** The task's session: continue it instead of creating one. */
  sessionID?: string
  /** Follow a session that is already working (after a restart): send nothing. */
  attach?: boolean
  onSession(sessionID: string): Promise<void>
  onProgress(line: string): void
  /**
   * Every event of the session, as its liveness (step, last tool, when): in memory, saved with the next progress line.
   */
  onActivity?(activity: Activity): void
  /** True once the shared server's process is gone (not merely slow). */
  serverGone?: () => Promise<boolean>
  /** Puts the session's permission asks and questions to the person; without it they are refused. */
  relay?: Relay
  /** What the task has spent so far, across all its sessions (on its record), and the caps that stop it. */
  spending?: Spending
  /**
   * Called when an ask is raised (open) and once it is answered: the record keeps the open ones. An open ask is put
   * to the person only once this has settled, so a process killed while the person is asked left its id behind.
   */
  onAsk?(ask: OpenAsk, open: boolean): Promise<void>
  /** The asks a process that died left open (from the record), answered when this turn attaches. */
  openAsks?: readonly OpenAsk[]
  caps?: Caps
  /** Saves the spending: called once the attempt is opened (awaited) and after each step counted. */
  onSpend?(): Promise<void>
  /** The one follow-up a non-empty final answer gets (an output_schema mismatch), or none. */
  followUp?(text: string): Promise<{ line: string; text: string } | undefined>
  /**
   * Another route waits (fallback.ts): OpenCode retrying a refusal another route fixes (a spent quota) before any
   * step stops the turn at once, instead of retrying it until the deadline.
   */
  refuseEarly?: boolean
}

export interface Turn {
  sessionID?: string
  outcome: WaitOutcome
  transcript?: Transcript
  /** A session creation still in flight when the turn was cancelled or timed out. */
  late?: Promise<string | undefined>
  /** Why the turn was stopped for its spending (usage.ts), when it was. */
  overBudget?: string
  /** The provider's refusal that stopped the turn before any step (refuseEarly), in OpenCode's words. */
  refused?: string
  /** The session ran a tool or finished a step, as its events said: the agent may have acted. */
  acted?: boolean
}

/** The promise's value, or undefined as soon as the signal aborts or the deadline passes. */
function raceStop<T>(promise: Promise<T>, signal: AbortSignal, deadline: number): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer)
      signal.removeEventListener("abort", stop)
      resolve(undefined)
    }
    const timer = setTimeout(stop, Math.max(0, deadline - Date.now()))
    signal.addEventListener("abort", stop, { once: true })
    promise.then(
      (value) => {
        clearTimeout(timer)
        signal.removeEventListener("abort", stop)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        signal.removeEventListener("abort", stop)
        reject(error)
      },
    )
  })
}

/**
 * What a turn does with each event of its session, one named step each, in this order: note whether the
 * agent acted, stop early on a refusal another route fixes, report liveness and progress, put an ask to the
 * person, count the spending against the caps. The state they leave (acted, refused, overBudget) is what the
 * turn reports; `stop` aborts the session for a refusal or a cap, as a cancel would.
 */
class SessionEvents {
  acted = false
  refused: string | undefined
  overBudget: string | undefined
  readonly stop = new AbortController()
  private readonly tracker = newTracker()

  constructor(private readonly spec: TurnSpec) {}

  see(event: Event): void {
    this.noteAction(event)
    this.refuseEarly(event)
    this.report(event)
    this.relayAsk(event)
    this.countSpending(event)
  }

  /** A tool ran or a step finished: the agent may have acted, so no other route may redo the turn. */
  private noteAction(event: Event): void {
    if (event.type === "message.part.updated" && ["tool", "step-finish"].includes(event.properties.part.type))
      this.acted = true
  }

  /** With another route waiting, a refusal OpenCode would retry until the deadline stops the turn now. */
  private refuseEarly(event: Event): void {
    if (!this.spec.refuseEarly || this.acted || this.refused || event.type !== "session.status") return
    const status = event.properties.status
    if (status.type === "retry" && refusalOf(status.message)) {
      this.refused = status.message
      this.stop.abort()
    }
  }

  /** The session's liveness (step, last tool, when) and its progress line, when the event makes one. */
  private report(event: Event): void {
    const line = describeEvent(event, this.tracker)
    this.spec.onActivity?.(activityOf(this.tracker, new Date()))
    if (line) this.spec.onProgress(line)
  }

  /**
   * A permission ask or question: kept open on the record, then answered by the person through the relay or by
   * policy. The record first: OpenCode cannot list every open ask (a webfetch's without a timeout), so a process
   * taking the task over after a kill answers it by the id the record kept.
   */
  private relayAsk(event: Event): void {
    const { client, workspace, relay, onAsk, onProgress } = this.spec
    const ask = openAskOf(event)
    const kept = ask && onAsk ? onAsk(ask, true) : Promise.resolve()
    const answered = () => ask && onAsk?.(ask, false)
    void kept.then(() => answerAsk(client, workspace, event, relay, onProgress)).then(answered, answered)
  }

  /** A finished step added to the task's spending, saved as counted, and the caps checked. */
  private countSpending(event: Event): void {
    if (!this.spec.spending || !addStep(this.spec.spending, event)) return
    // Saved as counted: a process taking the task over continues from here (OpenCode fills the gap).
    void this.spec.onSpend?.()
    this.checkCaps()
  }

  /** A cap passed stops the session like a cancel, but the turn remembers it was the spending. */
  checkCaps(): void {
    const { spending, caps } = this.spec
    if (!spending || !caps || this.overBudget) return
    this.overBudget = overCap(totalOf(spending), caps)
    if (!this.overBudget) return
    this.spec.onProgress(`stopped: ${this.overBudget}`)
    this.stop.abort()
  }
}

/** Why an ask left open by a process that died is refused by the one taking the task over. */
export const TAKEN_OVER = "the MCP server process that could put it to the person stopped, and no one else can"

export async function runTurn(spec: TurnSpec, brief: string): Promise<Turn> {
  const { client, hub, workspace } = spec
  if (spec.signal.aborted) return { outcome: { kind: "aborted" } }
  let sessionID = spec.sessionID
  if (!sessionID) {
    // Creating a session in a directory OpenCode has not seen yet starts an instance (seconds under
    // load): a cancel or the deadline must not wait for it. The late session is reconciled by the caller.
    const creating = createSession(client, workspace, spec.title, spec.scope)
    const created = await raceStop(creating, spec.signal, spec.deadline)
    // A creation that fails late left no session: undefined is exactly "nothing to reconcile".
    if (created === undefined)
      return {
        outcome: spec.signal.aborted ? { kind: "aborted" } : { kind: "deadline" },
        // Nobody waits on a late creation's failure: only a session that was made needs cleaning up.
        late: creating.catch(() => undefined),
      }
    sessionID = created
    await spec.onSession(sessionID)
  } else if (spec.scope) await restrictEdits(client, sessionID, workspace, spec.scope)
  const events = new SessionEvents(spec)
  const signal = AbortSignal.any([spec.signal, events.stop.signal])
  const follow = (): Promise<WaitOutcome> =>
    waitIdle(client, hub, sessionID, workspace, {
      signal,
      deadline: spec.deadline,
      serverGone: spec.serverGone,
      onEvent: (event) => events.see(event),
    })

  // A followed session's attempt was opened by the process that started it, after the message it marked.
  const resumed = spec.attach && spec.spending?.open?.sessionID === sessionID
  const before = resumed
    ? spec.spending!.open!.after
    : spec.sessionID && !spec.attach
      ? await lastMessageID(client, sessionID, workspace)
      : undefined
  if (spec.spending) {
    if (!resumed) openSegment(spec.spending, sessionID, before)
    // The steps the session finished while no process followed it count too, each once.
    if (spec.attach) {
      const sofar = await readTranscript(client, sessionID, workspace, before).catch(() => undefined)
      if (sofar) seedSegment(spec.spending, sofar.finished)
    }
    await spec.onSpend?.()
    // A task already past a cap (spent before a rerun, a takeover or this turn) sends nothing more.
    events.checkCaps()
  }
  let outcome: WaitOutcome = { kind: "aborted" }
  if (!signal.aborted) {
    if (!spec.attach)
      await sendPrompt(client, sessionID, {
        directory: workspace,
        agent: spec.agent,
        text: brief,
        model: spec.route,
        system: spec.system,
      })
    const following = follow()
    // Taken over: the asks the dead process left open reach no one as events. Listed once the stream is
    // followed, so an ask raised meanwhile is answered (twice at worst, harmlessly), never missed.
    if (spec.attach)
      for (const { ask, line } of await withdrawPending(client, workspace, [sessionID], TAKEN_OVER, spec.openAsks)) {
        spec.onProgress(line)
        await spec.onAsk?.(ask, false)
      }
    outcome = await following
  }
  // A lost server took the session's run with it: nothing is left to abort, and nothing answers.
  if (outcome.kind === "lost") return { sessionID, outcome, overBudget: events.overBudget, acted: events.acted }
  if (outcome.kind !== "idle") {
    await abortSession(client, sessionID, workspace)
    await settleAfterAbort(client, sessionID, workspace)
  }
  // No transcript (OpenCode unreachable) settles as a task without a report (needs_review), not a crash.
  let transcript = await readTranscript(client, sessionID, workspace, before).catch(() => undefined)
  // One follow-up at most, in the same session and budget: a model that spent its last step on a tool call
  // or returned nothing is asked for the report; an answer the parent's output_schema refuses, once more.
  // A refused turn is left for the next route: no request for a report it never had.
  const again =
    outcome.kind !== "idle" || !transcript || events.refused
      ? undefined
      : transcript.text
        ? await spec.followUp?.(transcript.text)
        : { line: "no report in the final answer; asking for it once", text: EMPTY_REPORT_NUDGE }
  if (again && transcript) {
    const mark = await lastMessageID(client, sessionID, workspace)
    spec.onProgress(again.line)
    await sendPrompt(client, sessionID, {
      directory: workspace,
      agent: spec.agent,
      text: again.text,
      model: spec.route,
      system: spec.system,
    })
    outcome = await follow()
    if (outcome.kind !== "idle") {
      await abortSession(client, sessionID, workspace)
      await settleAfterAbort(client, sessionID, workspace)
    }
    // As above: the first answer stands when the follow-up's cannot be read.
    const retry = await readTranscript(client, sessionID, workspace, mark).catch(() => undefined)
    if (retry)
      transcript = {
        ...retry,
        steps: transcript.steps + retry.steps,
        finished: [...transcript.finished, ...retry.finished],
        tools: [...transcript.tools, ...retry.tools],
        tokens: sumTokens(transcript.tokens, retry.tokens),
        cost: transcript.cost + retry.cost,
        bytes: transcript.bytes + retry.bytes,
      }
  }
  const { overBudget, refused, acted } = events
  return { sessionID, outcome, transcript, overBudget, refused, acted }
}

function sumTokens(a: Transcript["tokens"], b: Transcript["tokens"]): Transcript["tokens"] {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
  }
}

export function statusOf(outcome: WaitOutcome, transcript: Transcript | undefined, overBudget?: string): Status {
  if (overBudget) return "failed"
  if (outcome.kind === "aborted") return "cancelled"
  if (outcome.kind === "deadline") return "timed_out"
  // Aborted from elsewhere (another process's task_cancel, or a person in the TUI).
  if (transcript?.error?.startsWith("MessageAbortedError")) return "cancelled"
  if (outcome.kind === "error" || outcome.kind === "lost" || transcript?.error) return "failed"
  return transcript?.text ? "succeeded" : "needs_review"
}
