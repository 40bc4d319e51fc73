// The MCP server: one tool per file under tools/, the instructions the parent reads first. Task
// records left by an earlier process are recovered in the background by the Delegations it serves
// (constructed with `recover`, as the default one is).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Delegations } from "../engine/lifecycle"
import type { Runtime } from "../engine/runtime"
import { SERVER_NAME, VERSION } from "../version"
import instructions from "./instructions.md" with { type: "text" }
import { registerDelegateParallel } from "./tools/delegate_parallel"
import { registerModels } from "./tools/models"
import { registerPatchApply } from "./tools/patch_apply"
import { registerPatchDiscard } from "./tools/patch_discard"
import { registerPatchShow } from "./tools/patch_show"
import { registerPolicy } from "./tools/policy"
import { registerRunner } from "./tools/runner"
import { registerScout } from "./tools/scout"
import { registerSessionOutput } from "./tools/session_output"
import { registerSessions } from "./tools/sessions"
import { registerStats } from "./tools/stats"
import { registerTaskCancel } from "./tools/task_cancel"
import { registerTaskContinue } from "./tools/task_continue"
import { registerTaskList } from "./tools/task_list"
import { registerTaskResult } from "./tools/task_result"
import { registerTaskStatus } from "./tools/task_status"
import { registerWorker } from "./tools/worker"

export function createServer(runtime: Runtime, delegations = new Delegations(runtime, { recover: true })): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: VERSION }, { instructions, capabilities: { tools: {} } })
  registerScout(server, delegations)
  registerWorker(server, delegations)
  registerDelegateParallel(server, delegations)
  registerRunner(server, delegations)
  registerTaskStatus(server, delegations)
  registerTaskResult(server, delegations)
  registerTaskCancel(server, delegations)
  registerTaskList(server, delegations)
  registerTaskContinue(server, delegations)
  registerPatchShow(server, delegations)
  registerPatchApply(server, delegations)
  registerPatchDiscard(server, delegations)
  registerModels(server, delegations)
  registerPolicy(server, delegations)
  registerStats(server, delegations)
  registerSessionOutput(server, delegations)
  registerSessions(server, delegations)
  return server
}
