// The tasks extension (`io.modelcontextprotocol/tasks`, protocol 2026-07-28) for a client that declares
// it: the server decides, so a delegating call that outlasts its sync budget comes back as the
// extension's task (`resultType: "task"`) instead of `running`, and the client polls tasks/get, which
// carries the tool's own result once the task has ended; tasks/cancel stops it. A question the task's agent
// asks meanwhile (waiting for task_respond, engine/turn/inbox.ts) is `input_required` in tasks/get for a
// client that can show a form, and its reply comes with tasks/update. Every answer is read
// from the task records, so a successor process answers for an earlier one's tasks. A tool error is a
// `completed` task whose result has `isError`; `failed` is kept for a task whose result cannot be read.
// The SDK has no server side for the extension (its `ext-tasks` package is the requester's side and a
// 2025-11-25 receiver): these handlers are ours, checked against that package's schemas in the tests.
import {
  type CallToolResult,
  type ElicitResult,
  inputRequired,
  type InputRequests,
  type InputRequiredResult,
  inputResponse,
  isInputRequiredResult,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
} from "@modelcontextprotocol/server"
import { z } from "zod"
import { checkTaskId, isFinished, type TaskRecord } from "../engine/terms"
import { fail } from "../errors"
import { handOver } from "./calls"
import type { OpenBackend } from "./define"
import { errorResult, type Extra } from "./replies"

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"

/** The key a waiting question has in a task's inputRequests: one question waits at a time, so one key per task. */
const QUESTION_KEY = "question"

/** The calls that may become a task: the ones that start (or continue) a delegation. */
const TASK_TOOLS: readonly string[] = ["scout", "worker", "runner", "delegate_parallel", "task_continue"]

/** How often a client should poll tasks/get: progress lines come seconds apart. */
const POLL_MS = 1000

type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled"

/** A task as the extension describes it (TaskBaseShape and status); `ttlMs: null` keeps it as long as the record. */
type ExtensionTask = {
  taskId: string
  status: TaskStatus
  statusMessage: string
  createdAt: string
  lastUpdatedAt: string
  ttlMs: null
  pollIntervalMs: number
  result?: Record<string, unknown>
  error?: { code: number; message: string }
  /** With `input_required`: the form of the question the task waits on, by its key for tasks/update. */
  inputRequests?: InputRequests
}

/** True on a 2026-07-28 request whose envelope declares the tasks extension. */
export function declaresTasks(extra: Extra): boolean {
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined
  if (envelope?.[PROTOCOL_VERSION_KEY] === undefined) return false
  const capabilities = envelope[CLIENT_CAPABILITIES_KEY] as { extensions?: Record<string, unknown> } | undefined
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined
}

/**
 * A delegating call that came back `running` (it outlasted the sync budget), as the extension's task for a client
 * that declares it; any other result stays the result.
 */
export async function asTask(
  name: string,
  result: CallToolResult | InputRequiredResult,
  extra: Extra,
  open: OpenBackend,
): Promise<CallToolResult | InputRequiredResult> {
  if (!TASK_TOOLS.includes(name) || !declaresTasks(extra) || isInputRequiredResult(result)) return result
  const structured = result.structuredContent as Record<string, unknown> | undefined
  const id = structured?.task_id ?? structured?.group_id
  if (structured?.status !== "running" || typeof id !== "string") return result
  const { status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = await taskOf(open, id)
  const task = {
    resultType: "task",
    taskId: id,
    status,
    statusMessage,
    createdAt,
    lastUpdatedAt,
    ttlMs,
    pollIntervalMs,
  }
  // The SDK types a tool's answer as a result or input_required; the extension adds `task`, which it passes on as is.
  return task as unknown as CallToolResult
}

const TaskParams = z.object({ taskId: z.string() }).loose()
const UpdateParams = TaskParams.extend({ inputResponses: z.record(z.string(), z.unknown()).optional() })

/**
 * A working task whose question waits in this process, as `input_required` with the form the relay would put, for a
 * client that can show one (it declares form elicitation); anyone else sees it working (task_respond answers it).
 */
async function asking(open: OpenBackend, extra: Extra, task: ExtensionTask): Promise<ExtensionTask> {
  if (task.status !== "working" || !declaresForms(extra)) return task
  const { delegations } = await open()
  const ask = delegations.waitingAsk(task.taskId)
  if (!ask) return task
  const { elicitation } = await import("./relay")
  return {
    ...task,
    status: "input_required",
    inputRequests: { [QUESTION_KEY]: inputRequired.elicit(elicitation(ask)) },
  }
}

/** True when the request's client declares elicitation in form mode (one declaring only `url` cannot show a form). */
export function declaresForms(extra: Extra): boolean {
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined
  const capabilities = envelope?.[CLIENT_CAPABILITIES_KEY] as { elicitation?: Record<string, unknown> } | undefined
  return capabilities?.elicitation !== undefined && Object.keys(capabilities.elicitation).join() !== "url"
}

/**
 * Answers tasks/get, tasks/update and tasks/cancel for a request that declares the extension (the spec's -32021
 * otherwise); errors carry the same text and `next:` line a tool error would.
 */
export function offerTasks(server: Server, open: OpenBackend): void {
  server.setRequestHandler("tasks/get", { params: TaskParams }, (params, extra) =>
    asProtocol(extra, async () => withResult(open, await asking(open, extra, await taskOf(open, params.taskId)))),
  )
  // The answer to the question tasks/get handed out (the form's reply under its key) ends the task's wait as
  // task_respond would; an update with nothing for it, or for a task that waits on nothing here, is refused.
  server.setRequestHandler("tasks/update", { params: UpdateParams }, (params, extra) =>
    asProtocol(extra, async () => {
      await taskOf(open, params.taskId)
      // The SDK lifts a request's inputResponses out of its params, as for a retried tools/call.
      const view = inputResponse(extra.mcpReq.inputResponses ?? params.inputResponses, QUESTION_KEY)
      if (view.kind !== "elicit")
        throw fail(
          "Usage",
          `This update carries no answer under "${QUESTION_KEY}", the key tasks/get gave the question.`,
          "Answer the form tasks/get returned, under its key.",
        )
      const { delegations } = await open()
      const { verdictOf } = await import("./relay")
      const reply = { action: view.action, content: view.content as ElicitResult["content"] }
      await delegations.settleAsk(params.taskId, (ask) => verdictOf(ask, reply))
      return {}
    }),
  )
  server.setRequestHandler("tasks/cancel", { params: TaskParams }, (params, extra) =>
    asProtocol(extra, async () => {
      const id = params.taskId
      // The extension's cancel is idempotent: a task that had ended is acknowledged the same way, and tasks/get
      // says how it ended.
      if ((await taskOf(open, id)).status !== "working") return {}
      const { engine, delegations } = await open()
      const ids = engine.isGroupId(id) ? (await membersOf(open, id)).members.map((member) => member.id) : [id]
      // A member that ended meanwhile cannot be cancelled; tasks/get says how each ended.
      await Promise.all(ids.map((member) => delegations.cancel(member).catch(() => undefined)))
      return {}
    }),
  )
}

async function taskOf(open: OpenBackend, id: string): Promise<ExtensionTask> {
  const { engine } = await open()
  return engine.isGroupId(id) ? groupTask(open, id) : recordTask(await recordOf(open, id))
}

async function recordOf(open: OpenBackend, id: string): Promise<TaskRecord> {
  checkTaskId(id)
  const { delegations } = await open()
  const record = await delegations.read(id)
  if (!record) throw fail("Usage", `No task ${id}.`, "Pass the taskId a tools/call returned, or call task_list.")
  return record
}

async function membersOf(open: OpenBackend, id: string) {
  const { engine, delegations } = await open()
  const group = await engine.readGroup(delegations.runtime.paths.groupsDir, id)
  // A member whose record was set aside (garbage) leaves the rest of the group answerable.
  const members = await Promise.all(group.tasks.map((member) => delegations.read(member)))
  return { group, members: members.filter((member) => member !== undefined) }
}

async function groupTask(open: OpenBackend, id: string): Promise<ExtensionTask> {
  const { group, members } = await membersOf(open, id)
  const finished = members.filter((member) => isFinished(member.status))
  const updated = members.map((member) => member.updatedAt).sort()
  const status: TaskStatus =
    finished.length < members.length
      ? "working"
      : members.length > 0 && members.every((member) => member.status === "cancelled")
        ? "cancelled"
        : "completed"
  return {
    taskId: id,
    status,
    statusMessage: `${finished.length} of ${members.length} members finished`,
    createdAt: group.createdAt,
    lastUpdatedAt: updated.at(-1) ?? group.createdAt,
    ttlMs: null,
    pollIntervalMs: POLL_MS,
  }
}

/** A record as the extension's task: a finished delegation (failed included) is `completed` with its result. */
function recordTask(record: TaskRecord): ExtensionTask {
  const finished = isFinished(record.status)
  const status: TaskStatus = !finished ? "working" : record.status === "cancelled" ? "cancelled" : "completed"
  const message = finished ? `ended ${record.status}${record.note ? `: ${record.note}` : ""}` : record.progress.at(-1)
  return {
    taskId: record.id,
    status,
    statusMessage: message ?? "started",
    createdAt: record.createdAt,
    lastUpdatedAt: record.updatedAt,
    ttlMs: null,
    pollIntervalMs: POLL_MS,
  }
}

/** A completed task with the tool's result inlined, as tasks/get carries it; one that cannot give it has `failed`. */
async function withResult(open: OpenBackend, task: ExtensionTask): Promise<ExtensionTask> {
  if (task.status !== "completed") return task
  try {
    return { ...task, result: { ...(await resultOf(open, task.taskId)) } }
  } catch (error) {
    const { statusMessage: _, ...rest } = task
    const message = textOf(errorResult(error))
    return { ...rest, status: "failed", statusMessage: message, error: { code: -32603, message } }
  }
}

/** The finished task's result, the one the call gives when it finishes in time; a group's is the tool's own. */
async function resultOf(open: OpenBackend, id: string): Promise<CallToolResult> {
  const { engine, delegations } = await open()
  if (!engine.isGroupId(id)) {
    const { toResult } = await import("./define")
    return toResult(await handOver(delegations, await recordOf(open, id)))
  }
  const { TOOLS } = await import("./toolset")
  const tool = TOOLS.find((tool) => tool.name === "delegate_parallel")!
  // Its own signal: reading a finished group's result never cancels it.
  const extra = { mcpReq: { signal: new AbortController().signal, _meta: {} } } as unknown as Extra
  const peer = { name: undefined, elicits: false, connected: () => false, gate: undefined! }
  // Reading a group's result asks no one: it is never input_required.
  return (await tool.call({ group_id: id }, { peer, extra }, open)) as CallToolResult
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n")
}

/** Our errors as JSON-RPC errors carrying the same text and `next:` line a tool error would. */
async function asProtocol<T>(extra: Extra, work: () => Promise<T>): Promise<T> {
  if (!declaresTasks(extra))
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `Declare the ${TASKS_EXTENSION} extension in the request's client capabilities to use tasks.`,
    )
  try {
    return await work()
  } catch (error) {
    if (error instanceof ProtocolError) throw error
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, textOf(errorResult(error)))
  }
}
