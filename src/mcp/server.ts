// The MCP server: one tool per file under tools/, the instructions the parent reads first. The tools
// run on a backend opened with the first call (define.ts): `serve` loads the engine then, and builds
// the Delegations that recovers the task records an earlier process left.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Delegations } from "../engine/lifecycle"
import { SERVER_NAME, VERSION } from "../version"
import type { McpTool, OpenBackend } from "./define"
import instructions from "./instructions.md" with { type: "text" }
import { offerNativeTasks, TASKS_CAPABILITY } from "./tasks"
import { delegateParallel } from "./tools/delegate_parallel"
import { models } from "./tools/models"
import { patchApply } from "./tools/patch_apply"
import { patchDiscard } from "./tools/patch_discard"
import { patchShow } from "./tools/patch_show"
import { policy } from "./tools/policy"
import { review } from "./tools/review"
import { runner } from "./tools/runner"
import { scout } from "./tools/scout"
import { sessionOutput } from "./tools/session_output"
import { sessions } from "./tools/sessions"
import { stats } from "./tools/stats"
import { taskCancel } from "./tools/task_cancel"
import { taskRespond } from "./tools/task_respond"
import { taskContinue } from "./tools/task_continue"
import { taskList } from "./tools/task_list"
import { taskResult } from "./tools/task_result"
import { taskStatus } from "./tools/task_status"
import { worker } from "./tools/worker"

/** Every tool, in the order tools/list shows them. */
export const TOOLS: McpTool[] = [
  scout,
  worker,
  delegateParallel,
  runner,
  taskStatus,
  taskResult,
  taskCancel,
  taskRespond,
  taskList,
  taskContinue,
  patchShow,
  patchApply,
  patchDiscard,
  review,
  models,
  policy,
  stats,
  sessionOutput,
  sessions,
]

export function createServer(open: OpenBackend): McpServer {
  // No `tools` here: the McpServer declares it with the first tool, whose handlers tasks.ts wraps as they go in.
  const capabilities = { tasks: TASKS_CAPABILITY }
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, { instructions, capabilities })
  offerNativeTasks(server, open)
  for (const tool of TOOLS) tool.register(server, open)
  return server
}

/** A backend on delegations already built (tests, and anything that owns its Delegations): the engine loads now. */
export function backendOf(delegations: Delegations): OpenBackend {
  const opened = import("../engine").then((engine) => ({ engine, delegations }))
  return () => opened
}
