// Every tool, in the order tools/list shows them. Loaded with the first tool call (server.ts);
// `tools/list` is answered from dist/tools-list.json, which the build writes from these.
import type { McpTool } from "./define"
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
