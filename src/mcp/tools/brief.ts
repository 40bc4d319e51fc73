// The shape scout and worker share: `cwd` and a self-contained `task` brief, run by the role's agent
// through the task lifecycle. Each tool file states only what differs.
import type { ToolAnnotations } from "@modelcontextprotocol/server"
import { z } from "zod"
import { agentName, sessionTitle } from "../../engine/terms"
import { startAndFollow } from "../calls"
import { defineTool, type McpTool } from "../define"
import {
  SEARCH_HINT,
  callTimeoutArg,
  idempotencyArg,
  labelArg,
  isolationArg,
  mechanicalArg,
  modelArgs,
  outputSchemaArg,
  policyArgs,
  roleArg,
  resultShape,
  scopeArg,
  verifyArg,
} from "../shared"

export interface BriefTool {
  role: "scout" | "worker"
  title: string
  description: string
  cwd: string
  task: string
  writable: boolean
  annotations: ToolAnnotations
  /** Words a user would say for this tool: Claude Code's tool search matches them (never shown to the model). */
  searchHint: string
}

export function briefTool(tool: BriefTool): McpTool {
  return defineTool({
    name: tool.role,
    title: tool.title,
    description: tool.description,
    input: {
      cwd: z.string().min(1).describe(tool.cwd),
      task: z.string().min(1).describe(tool.task),
      ...callTimeoutArg(tool.role),
      ...labelArg,
      ...roleArg,
      ...modelArgs,
      ...idempotencyArg,
      ...policyArgs,
      ...outputSchemaArg,
      // Only a worker changes files, so only a worker can be mechanical or isolated.
      ...(tool.role === "worker" ? { ...mechanicalArg, ...isolationArg, ...verifyArg, ...scopeArg } : {}),
    },
    output: resultShape,
    annotations: tool.annotations,
    _meta: { [SEARCH_HINT]: tool.searchHint },
    run: async (args, { peer, delegations, extra }) => {
      const mechanical = "mechanical" in args && args.mechanical === true
      return startAndFollow(
        peer,
        delegations,
        {
          role: tool.role,
          agent: agentName(tool.role),
          cwd: args.cwd,
          brief: args.task,
          title: sessionTitle(tool.role, args.task, args.label ?? delegations.runtime.flags.label, args.role),
          model: args.model,
          variant: args.variant,
          userRole: args.role,
          writable: tool.writable,
          policy: {
            mode: args.mode,
            tier: args.tier,
            delegation: tool.role === "worker" ? { role: "worker", mechanical } : { role: "scout" },
            userRole: args.role,
            texts: { task: args.task },
          },
          isolation: "isolation" in args ? args.isolation : undefined,
          verify: "verify" in args ? args.verify : undefined,
          verifyFrozen: "verify_frozen" in args ? args.verify_frozen : undefined,
          outputSchema: args.output_schema,
          scope: "scope" in args ? args.scope : undefined,
          idempotencyKey: args.idempotency_key,
          callTimeoutS: args.timeout_seconds,
        },
        extra,
      )
    },
  })
}
