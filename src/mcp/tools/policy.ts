// The policy tool: the same gathering the delegating tools do before they start (src/engine/policy.ts
// policyReport), shown instead of enforced, so a parent can see why a call would be refused before making it.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import type { Delegations } from "../../engine/lifecycle"
import { describeSource, MODE_SOURCES, MODES } from "../../policy/mode"
import { TIERS } from "../../policy/tiers"
import { errorResult, policyArgs } from "../shared"
import description from "./policy.md" with { type: "text" }

const statement = z.object({ source: z.enum(MODE_SOURCES), mode: z.enum(MODES), where: z.string() })

export function registerPolicy(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "policy",
    {
      title: "Delegation policy for a workspace",
      description,
      inputSchema: {
        cwd: z.string().min(1),
        mode: policyArgs.mode.describe("A mode you would pass."),
      },
      outputSchema: {
        project_root: z
          .string()
          .describe(
            "The outermost ancestor of cwd below HOME holding a .git, else cwd. Markers count in cwd and every ancestor below HOME.",
          ),
        mode: z.enum(MODES),
        source: z.string().describe("Where the mode came from."),
        statements: z.array(statement).describe("Every place that states a mode, in the order they are read."),
        overruled: z.array(statement).describe("Statements that lost (sensitive stated anywhere wins)."),
        allowed: z.object({ scout: z.string(), worker: z.string(), runner: z.string() }),
        tiers: z.object({ required: z.boolean(), delegated: z.array(z.enum(TIERS)), refused: z.array(z.enum(TIERS)) }),
        secret_guard: z.string(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        const policy = await delegations.policy(args.cwd, args.mode)
        const { resolved, allowed, tiers, source } = policy
        const lines = [
          `mode: ${resolved.mode} (${source})`,
          `project root: ${policy.projectRoot}`,
          ...resolved.overruled.map((s) => `overruled: ${s.mode} from ${describeSource(s)}`),
          `scout: ${allowed.scout}`,
          `worker: ${allowed.worker}`,
          `runner: ${allowed.runner}`,
          `tier: ${tiers.required ? "required" : "optional"}; ${tiers.delegated.join(" and ")} are delegated, ${tiers.refused.join(" and ")} are refused (do that work yourself)`,
          `secret guard: ${policy.secretGuard}`,
        ]
        return {
          content: [{ type: "text", text: lines.join("\n") }],
          structuredContent: {
            project_root: policy.projectRoot,
            mode: resolved.mode,
            source,
            statements: resolved.statements,
            overruled: resolved.overruled,
            allowed,
            tiers,
            secret_guard: policy.secretGuard,
          },
        }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
