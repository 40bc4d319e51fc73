// One delegation from start to result: resolve the workspace and model route, run an OpenCode
// session with the role's agent, follow it, read back what it did, and clean up.
import type { Role } from "../config/schema"
import { timeoutLimits } from "../config/schema"
import { AppError, fail } from "../errors"
import { checkRoute, readCatalog } from "../opencode/catalog"
import { answerAsk } from "../opencode/policy"
import {
  abortSession,
  createSession,
  lastMessageID,
  parseModel,
  readTranscript,
  removeSession,
  sendPrompt,
  waitIdle,
  type ModelRoute,
  type Transcript,
  type WaitOutcome,
} from "../opencode/session"
import { canonicalWorkspace } from "../workspace/root"
import { describeEvent, newTracker } from "./progress"
import { fromTranscript, type DelegationResult, type Status } from "./result"
import type { Runtime } from "./runtime"

export interface DelegationRequest {
  role: Role
  agent: string
  cwd: string
  brief: string
  title: string
  /** provider/model; overrides the configured model for this call. */
  model?: string
  variant?: string
  signal?: AbortSignal
  onProgress?: (message: string) => void
}

const EMPTY_REPORT_NUDGE =
  "Your last message did not contain the report. Do not call any more tools. Write the final report now, in the format your instructions give."

export async function resolveRoute(runtime: Runtime, role: Role, model?: string, variant?: string): Promise<{ route?: ModelRoute; explicit: boolean }> {
  const config = await runtime.config()
  const id = model ?? config.models[role]
  if (model !== undefined && !/^[^/\s]+\/\S+$/.test(model))
    throw fail("Usage", `model must be written provider/model, got "${model}".`, "Call the models tool for the ids OpenCode offers.")
  const chosenVariant = variant ?? (model === undefined ? config.modelVariants[role] : undefined)
  if (!id) {
    if (variant) throw fail("Usage", "A variant needs a model.", `Pass model as well, or set models.${role} in the config.`)
    return { explicit: false }
  }
  return { route: { ...parseModel(id), variant: chosenVariant }, explicit: model !== undefined || variant !== undefined }
}

export async function delegate(runtime: Runtime, request: DelegationRequest): Promise<DelegationResult> {
  const started = Date.now()
  const workspace = await canonicalWorkspace(request.cwd)
  const config = await runtime.config()
  const timeoutMs = runtime.flags.bridgeTimeoutMs ?? timeoutLimits(config)[request.role] * 1000
  const { route, explicit } = await resolveRoute(runtime, request.role, request.model, request.variant)
  const { client, hub } = await runtime.opencode()
  if (route && explicit) checkRoute(await readCatalog(client, workspace), route)

  const sessionID = await createSession(client, workspace, request.title)
  const tracker = newTracker()
  const follow = (deadline: number): Promise<WaitOutcome> =>
    waitIdle(client, hub, sessionID, workspace, {
      signal: request.signal,
      deadline,
      onEvent: (event) => {
        void answerAsk(client, workspace, event).then((answered) => answered && request.onProgress?.(`refused a ${answered.kind} request (${answered.kind === "permission" ? answered.permission : "question"})`))
        const line = describeEvent(event, tracker)
        if (line) request.onProgress?.(line)
      },
    })

  let outcome: WaitOutcome = { kind: "aborted" }
  let transcript: Transcript | undefined
  try {
    const deadline = started + timeoutMs
    await sendPrompt(client, sessionID, { directory: workspace, agent: request.agent, text: request.brief, model: route })
    outcome = await follow(deadline)
    if (outcome.kind === "aborted" || outcome.kind === "deadline") await abortSession(client, sessionID, workspace)
    transcript = await readTranscript(client, sessionID, workspace)
    if (outcome.kind === "idle" && !transcript.text) {
      // A model that spent its last step on a tool call or returned nothing gets one plain request for the report.
      const before = await lastMessageID(client, sessionID, workspace)
      await sendPrompt(client, sessionID, { directory: workspace, agent: request.agent, text: EMPTY_REPORT_NUDGE, model: route })
      outcome = await follow(deadline)
      const retry = await readTranscript(client, sessionID, workspace, before)
      transcript = { ...retry, steps: transcript.steps + retry.steps, tools: [...transcript.tools, ...retry.tools] }
    }
  } finally {
    if (!runtime.flags.preserveSessions) await removeSession(client, sessionID, workspace)
  }
  const status = statusOf(outcome, transcript)
  const result = fromTranscript({ role: request.role, workspace, sessionID, durationMs: Date.now() - started, status }, transcript)
  if (outcome.kind === "error") result.error = outcome.message
  if (status === "timed_out") result.next = `The ${request.role} ran out of its ${Math.round(timeoutMs / 1000)}s budget; narrow the task or raise timeoutLimits.`
  if (status === "needs_review") result.next = "The agent finished without a usable report; read the session or rerun with a narrower task."
  return result
}

function statusOf(outcome: WaitOutcome, transcript: Transcript | undefined): Status {
  if (outcome.kind === "aborted") return "cancelled"
  if (outcome.kind === "deadline") return "timed_out"
  if (outcome.kind === "error" || transcript?.error) return "failed"
  return transcript?.text ? "succeeded" : "needs_review"
}

export const isUsageError = (error: unknown) => error instanceof AppError && error.kind === "Usage"
