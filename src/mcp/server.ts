// The MCP server: one tool per file under tools/, the instructions the parent reads first. Task
// records left by an earlier process are recovered in the background by the Delegations it serves
// (constructed with `recover`, as the default one is).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Delegations } from "../engine/lifecycle"
import type { Runtime } from "../engine/runtime"
import { SERVER_NAME, VERSION } from "../version"
import type { McpTool } from "./define"
import instructions from "./instructions.md" with { type: "text" }
import { offerNativeTasks, TASKS_CAPABILITY } from "./tasks"
import { registerDelegateParallel } from "./tools/delegate_parallel"
import { models } from "./tools/models"
import { registerPatchApply } from "./tools/patch_apply"
import { registerPatchDiscard } from "./tools/patch_discard"
import { registerPatchShow } from "./tools/patch_show"
import { registerPolicy } from "./tools/policy"
import { runner } from "./tools/runner"
import { scout } from "./tools/scout"
import { sessionOutput } from "./tools/session_output"
import { sessions } from "./tools/sessions"
import { stats } from "./tools/stats"
import { taskCancel } from "./tools/task_cancel"
import { taskRespond } from "./tools/task_respond"
import { taskContinue } from "./tools/task_continue"
import { registerTaskList } from "./tools/task_list"
import { taskResult } from "./tools/task_result"
import { taskStatus } from "./tools/task_status"
import { worker } from "./tools/worker"

/** A tool still registered by its own function (not yet a definition): its name, for the tool-set test. */
const registered = (name: string, register: McpTool["register"]): McpTool => ({ name, register })

/** Every tool, in the order tools/list shows them. */
export const TOOLS: McpTool[] = [
  scout,
  worker,
  registered("delegate_parallel", registerDelegateParallel),
  runner,
  taskStatus,
  taskResult,
  taskCancel,
  taskRespond,
  registered("task_list", registerTaskList),
  taskContinue,
  registered("patch_show", registerPatchShow),
  registered("patch_apply", registerPatchApply),
  registered("patch_discard", registerPatchDiscard),
  models,
  registered("policy", registerPolicy),
  stats,
  sessionOutput,
  sessions,
]

export function createServer(runtime: Runtime, delegations = new Delegations(runtime, { recover: true })): McpServer {
  // No `tools` here: the McpServer declares it with the first tool, whose handlers tasks.ts wraps as they go in.
  const capabilities = { tasks: TASKS_CAPABILITY }
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, { instructions, capabilities })
  offerNativeTasks(server, delegations)
  for (const tool of TOOLS) tool.register(server, delegations)
  return server
}
