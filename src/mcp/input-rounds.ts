// Questions and permission asks on protocol revision 2026-07-28, which has no requests from server to
// client: a delegating call whose task asks the person returns `input_required` with the form
// (`elicitation/create`, the same form relay.ts puts on 2025) while the task waits on the answer; the
// client puts the form to the person and calls the tool again with their answer and the call's
// `requestState`, and that call delivers the answer and follows the task on as the first did, until its
// result, `running`, or the next ask. One such exchange is a flow: it lives in this process, named in the
// `requestState` under a seal the SDK checks before the handler runs. An ask
// whose answer does not come within its wait, a flow whose retry never comes, and a retry that reaches a
// successor process end as an ask no one could answer does on 2025: a question then waits as
// `waiting_input` for task_respond (engine/turn/inbox.ts). The seal is request-state.ts.
import {
  inputRequired,
  inputResponse,
  type ElicitRequestFormParams,
  type ElicitResult,
  type InputRequests,
  type InputRequiredResult,
  SdkError,
  SdkErrorCode,
} from "@modelcontextprotocol/server"
import type { Delegations } from "../engine/lifecycle"
import type { TaskRecord } from "../engine/terms"
import { fail } from "../errors"
import { type ForegroundRelay, relayThrough, type RelayOptions } from "./relay"
import type { RelayGate } from "./relay-gate"
import { type RoundState, sealRound } from "./request-state"

/** The flows waiting for their client's next round, by id. */
const flows = new Map<string, InputFlow>()

interface Pending {
  params: ElicitRequestFormParams
  /** Handed to the client in a round: the next round answers it. */
  sent: boolean
  answer(result: ElicitResult): void
}

/**
 * One call's asks carried as rounds of `input_required`. The relay it hands the task puts each ask here;
 * the round that is following the task is woken to return them, and the next round answers them.
 */
export class InputFlow {
  readonly id = crypto.randomUUID()
  readonly foreground: ForegroundRelay
  private readonly pending = new Map<string, Pending>()
  private asked = 0
  private wake: (() => void) | undefined
  private readonly cancelled = new AbortController()
  private abandoned: Timer | undefined

  constructor(
    gate: RelayGate,
    private readonly options: Omit<RelayOptions, "until"> & { waitMs: number },
  ) {
    // Each round has its own sync budget, so an ask is bounded by its own wait alone.
    this.foreground = relayThrough(
      gate,
      { put: (params, sending) => this.put(params, sending), signal: this.cancelled.signal, connected: () => true },
      { ...options, until: Infinity },
    )
    flows.set(this.id, this)
  }

  static find(id: string): InputFlow | undefined {
    return flows.get(id)
  }

  /** A signal that aborts once an ask waits for the person (at once when one already does). */
  asking(): AbortSignal {
    const controller = new AbortController()
    if (this.pending.size) controller.abort()
    else this.wake = () => controller.abort()
    return controller.signal
  }

  /** The asks waiting for the person, as the requests of an `input_required` result. */
  requests(): InputRequests {
    return Object.fromEntries(
      [...this.pending].map(([key, pending]) => {
        pending.sent = true
        return [key, inputRequired.elicit(pending.params)]
      }),
    )
  }

  /**
   * The client's answers from a round to the asks the last round handed it; one it left out is dismissed, as a form
   * closed without an answer is. An ask that came meanwhile goes out with this round's result. False when none of
   * those asks waits any more (each lapsed or was withdrawn): the answers reach no one.
   */
  answer(responses: Record<string, unknown> | undefined): boolean {
    clearTimeout(this.abandoned)
    const handed = [...this.pending].filter(([, pending]) => pending.sent)
    if (!handed.length) return false
    for (const [key, pending] of handed) {
      const view = inputResponse(responses, key)
      // The content is the client's: verdictOf reads each field as a label of the ask's own, or as nothing.
      const content = view.kind === "elicit" ? (view.content as ElicitResult["content"]) : undefined
      pending.answer(view.kind === "elicit" ? { action: view.action, content } : { action: "cancel" })
    }
    return true
  }

  /**
   * The round returned `input_required`: if the next round does not come while its asks may still be answered, the
   * flow ends and later asks are refused as after any call that returned.
   */
  awaitRound(): void {
    clearTimeout(this.abandoned)
    this.abandoned = setTimeout(() => this.end(), this.options.waitMs + 1000)
  }

  /** The round following the task was cancelled: the asks open now are withdrawn. */
  cancel(): void {
    this.cancelled.abort()
  }

  /** No round follows the task any more: asks from now on are refused, one still open is withdrawn. */
  end(): void {
    clearTimeout(this.abandoned)
    this.foreground.detach()
    flows.delete(this.id)
  }

  private put(params: ElicitRequestFormParams, sending: { timeout: number; signal: AbortSignal }) {
    const key = `ask${++this.asked}`
    const { promise, resolve, reject } = Promise.withResolvers<ElicitResult>()
    const settle = () => {
      clearTimeout(timer)
      sending.signal.removeEventListener("abort", withdrawn)
      this.pending.delete(key)
    }
    const timer = setTimeout(() => {
      settle()
      reject(new SdkError(SdkErrorCode.RequestTimeout, "no answer came with a round in time"))
    }, sending.timeout)
    const withdrawn = () => {
      settle()
      reject(new Error("withdrawn"))
    }
    sending.signal.addEventListener("abort", withdrawn, { once: true })
    this.pending.set(key, {
      params,
      sent: false,
      answer: (result) => {
        settle()
        resolve(result)
      },
    })
    this.wake?.()
    this.wake = undefined
    return promise
  }
}

/** The `input_required` result that hands the flow's asks to the client, sealed for its next round. */
export async function inputRound(flow: InputFlow, record: TaskRecord, tool: string): Promise<InputRequiredResult> {
  flow.awaitRound()
  const requestState = await sealRound({ flow: flow.id, task: record.id, tool })
  return inputRequired({ inputRequests: flow.requests(), requestState })
}

/**
 * The flow a round continues, with the round's answers delivered; one that ended (its wait lapsed, or another process
 * began it), or whose asks no longer wait for these answers, is said so.
 */
export async function answeredFlow(
  tool: string,
  state: RoundState,
  responses: Record<string, unknown> | undefined,
  delegations: Delegations,
): Promise<InputFlow> {
  if (state.tool !== tool)
    throw fail(
      "Usage",
      `This requestState belongs to a ${state.tool} call, not ${tool}.`,
      `Call ${state.tool} with it.`,
    )
  const flow = InputFlow.find(state.flow)
  if (flow?.answer(responses)) return flow
  // The asks lapsed before the flow's own end: the task may even have finished meanwhile.
  flow?.end()
  const record = await delegations.read(state.task)
  throw fail(
    "Usage",
    `The question of task ${state.task} was no longer waiting for this answer: it waited longer than its bound, or ` +
      `the server restarted${record ? ` (the task is ${record.status})` : ""}.`,
    `Call task_status with task_id "${state.task}"; a question still open there is answered with task_respond.`,
  )
}
