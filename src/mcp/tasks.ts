// Native MCP tasks (the experimental tasks of protocol 2025-11-25, which the pinned SDK speaks) for
// clients that declare them: a delegating call sent with a `task` parameter starts its delegation and
// returns our task id (a group id for delegate_parallel) as the MCP task id; tasks/get, tasks/result
// and tasks/cancel answer from the task records, so a successor process answers for an earlier one's
// tasks. Clients that do not declare tasks get today's behaviour, untouched. Hooked where the tool
// handlers are installed, so the tools themselves know nothing of it (README "Native MCP tasks").
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type CallToolResult,
  type ListToolsRequest,
  type ListToolsResult,
  type ServerResult,
  type Task,
} from "@modelcontextprotocol/sdk/types.js"
import { checkTaskId, isFinished, type TaskRecord } from "../engine/terms"
import { fail } from "../errors"
import { handOver } from "./calls"
import { toResult, leanListing, type OpenBackend } from "./define"
import { errorResult, type Extra } from "./replies"
import { withoutWaiting } from "./task-scope"

/** The calls that may run as a task: the ones that start (or continue) a delegation. */
const TASK_TOOLS: readonly string[] = ["scout", "worker", "runner", "delegate_parallel", "task_continue"]

/** What the server declares: task-augmented tools/call, and tasks/cancel (tasks/list is task_list's job). */
export const TASKS_CAPABILITY = { cancel: {}, requests: { tools: { call: {} } } }

/** How often a client should poll tasks/get: progress lines come seconds apart. */
export const POLL_MS = 1000

type CallHandler = (request: CallToolRequest, extra: Extra) => ServerResult | Promise<ServerResult>
type ListHandler = (request: ListToolsRequest, extra: Extra) => ServerResult | Promise<ServerResult>

/**
 * Wraps the tools/call and tools/list handlers as the McpServer installs them (call before the first
 * tool is registered) and answers tasks/get, tasks/result and tasks/cancel.
 */
export function offerNativeTasks(server: McpServer, open: OpenBackend): void {
  const inner = server.server
  // Throws when the tool handlers are in already (a `tools` capability given to the McpServer's constructor).
  inner.assertCanSetRequestHandler("tools/call")
  const declared = () => inner.getClientCapabilities()?.tasks !== undefined
  const set = inner.setRequestHandler.bind(inner)
  let call: CallHandler | undefined
  const install: typeof inner.setRequestHandler = (schema, handler) => {
    const method: unknown = schema
    if (method === CallToolRequestSchema) {
      call = handler as unknown as CallHandler
      return set(CallToolRequestSchema, (request, extra) => callAsTask(request, extra))
    }
    if (method === ListToolsRequestSchema) {
      const list = handler as unknown as ListHandler
      return set(ListToolsRequestSchema, async (request, extra) =>
        offered(leanListing((await list(request, extra)) as ListToolsResult)),
      )
    }
    return set(schema, handler)
  }
  inner.setRequestHandler = install

  async function callAsTask(request: CallToolRequest, extra: Extra): Promise<ServerResult> {
    const original = call!
    if (!request.params.task || !declared()) return original(request, extra)
    // As the spec has it for a tool whose taskSupport is forbidden, with the way out.
    if (!TASK_TOOLS.includes(request.params.name))
      throw new McpError(
        ErrorCode.MethodNotFound,
        `${request.params.name} does not run as a task.\nnext: Call it without task; ${TASK_TOOLS.join(", ")} do.`,
      )
    const started = (await withoutWaiting(async () => original(request, extra))) as CallToolResult
    const id = idOf(started)
    // Nothing started (bad arguments, a refusal): the tool's own error, as a protocol error.
    if (!id) throw new McpError(ErrorCode.InvalidParams, textOf(started))
    return { task: await taskOf(id) }
  }

  function offered(listed: ListToolsResult): ListToolsResult {
    if (!declared()) return listed
    const tools = listed.tools.map((tool) =>
      TASK_TOOLS.includes(tool.name)
        ? { ...tool, execution: { ...tool.execution, taskSupport: "optional" as const } }
        : tool,
    )
    return { ...listed, tools }
  }

  async function taskOf(id: string): Promise<Task> {
    const { engine } = await open()
    return engine.isGroupId(id) ? groupTask(id) : recordTask(await recordOf(id))
  }

  async function recordOf(id: string): Promise<TaskRecord> {
    checkTaskId(id)
    const { delegations } = await open()
    const record = await delegations.read(id)
    if (!record) throw fail("Usage", `No task ${id}.`, "Pass the taskId a tools/call returned, or call task_list.")
    return record
  }

  async function membersOf(id: string) {
    const { engine, delegations } = await open()
    const group = await engine.readGroup(delegations.runtime.paths.groupsDir, id)
    // A member whose record was set aside (garbage) leaves the rest of the group answerable.
    const members = await Promise.all(group.tasks.map((id) => delegations.read(id)))
    return { group, members: members.filter((member) => member !== undefined) }
  }

  async function groupTask(id: string): Promise<Task> {
    const { group, members } = await membersOf(id)
    const finished = members.filter((member) => isFinished(member.status))
    const updated = members.map((member) => member.updatedAt).sort()
    const status =
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
      ttl: null,
      pollInterval: POLL_MS,
    }
  }

  /** Waits for the task (or every member) to finish; the result the call gives today when it finishes in time. */
  async function resultOf(id: string, extra: Extra): Promise<CallToolResult> {
    const { engine, delegations } = await open()
    // Known before waiting: follow() waits out a record that does not exist yet.
    const ids = engine.isGroupId(id)
      ? (await membersOf(id)).members.map((member) => member.id)
      : [(await recordOf(id)).id]
    const final = await Promise.all(ids.map((member) => delegations.follow(member, { signal: extra.signal })))
    if (final.some((record) => !record || !isFinished(record.status)))
      throw new McpError(ErrorCode.RequestTimeout, `Task ${id} is still running; call tasks/result again.`)
    if (!engine.isGroupId(id)) return toResult(await handOver(delegations, final[0]!))
    // The group's result is the tool's own: its call with the group id, its members all finished.
    const request: CallToolRequest = {
      method: "tools/call",
      params: { name: "delegate_parallel", arguments: { group_id: id } },
    }
    // Its own signal: abandoning this read must not cancel the group, as a cancelled call would.
    const quiet = { ...extra, signal: new AbortController().signal }
    return (await withoutWaiting(async () => call!(request, quiet))) as CallToolResult
  }

  set(GetTaskRequestSchema, (request) => asProtocol(async () => taskOf(request.params.taskId)))
  set(GetTaskPayloadRequestSchema, (request, extra) =>
    asProtocol(async () => {
      const result = await resultOf(request.params.taskId, extra)
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId: request.params.taskId } } }
    }),
  )
  set(CancelTaskRequestSchema, (request) =>
    asProtocol(async () => {
      const id = request.params.taskId
      const before = await taskOf(id)
      if (isTerminal(before.status))
        throw fail(
          "Usage",
          `Task ${id} had already ended (${before.status}); nothing was cancelled.`,
          "Call tasks/result.",
        )
      const { engine, delegations } = await open()
      const ids = engine.isGroupId(id) ? (await membersOf(id)).members.map((member) => member.id) : [id]
      // A member that ended meanwhile cannot be cancelled; the task read next says how each ended.
      await Promise.all(ids.map((member) => delegations.cancel(member).catch(() => undefined)))
      return taskOf(id)
    }),
  )
}

/** A record as an MCP task: the status the protocol knows, the latest progress line as its message. */
function recordTask(record: TaskRecord): Task {
  const finished = isFinished(record.status)
  const status = !finished
    ? "working"
    : record.status === "failed"
      ? "failed"
      : record.status === "cancelled"
        ? "cancelled"
        : "completed"
  const message = finished ? `ended ${record.status}${record.note ? `: ${record.note}` : ""}` : record.progress.at(-1)
  return {
    taskId: record.id,
    status,
    statusMessage: message ?? "started",
    createdAt: record.createdAt,
    lastUpdatedAt: record.updatedAt,
    ttl: null,
    pollInterval: POLL_MS,
  }
}

const isTerminal = (status: Task["status"]) => status === "completed" || status === "failed" || status === "cancelled"

function idOf(result: CallToolResult): string | undefined {
  const structured = result.structuredContent
  const id = structured?.task_id ?? structured?.group_id
  return typeof id === "string" ? id : undefined
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n")
}

/** Our errors as JSON-RPC errors carrying the same text and `next:` line a tool error would. */
async function asProtocol<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof McpError) throw error
    throw new McpError(ErrorCode.InvalidParams, textOf(errorResult(error)))
  }
}
