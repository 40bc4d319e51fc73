// The runner tool: one command, run by the runner agent for the requested workspace access and
// network, through the same task lifecycle as scout and worker (budget preflight with the command's
// timeout, writer state when writable, sync budget). The task's result carries the run's exit code and
// log path from the plugin's run record (lifecycle.ts), so the parent does not depend on the model to copy them.
import { z } from "zod"
import { RUNNER_TOOLS, runnerAgentName, sessionTitle, RUNNER_TIMEOUT, runnerBrief } from "../../engine/terms"
import { startAndFollow } from "../calls"
import { defineTool } from "../define"
import { SEARCH_HINT, idempotencyArg, labelArg, modelArgs, outputSchemaArg, policyArgs, resultShape } from "../shared"
import description from "./runner.md" with { type: "text" }

export const runner = defineTool({
  name: "runner",
  title: "Runner (noisy command, short analysis)",
  description,
  input: {
    cwd: z.string().min(1),
    command: z.string().min(1).describe("Run once with bash -c."),
    objective: z.string().min(1),
    expected: z.string().optional().describe("The outcome you expect."),
    timeout_seconds: z
      .number()
      .int()
      .min(RUNNER_TIMEOUT.min)
      .max(RUNNER_TIMEOUT.max)
      .optional()
      .describe(`Command timeout (default ${RUNNER_TIMEOUT.fallback}).`),
    workspace_access: z
      .enum(["read_only", "writable"])
      .default("read_only")
      .describe("writable only if it must write."),
    network_access: z.enum(["disabled", "host"]).default("disabled").describe("host: trusted commands only."),
    ...modelArgs,
    ...labelArg,
    ...idempotencyArg,
    ...policyArgs,
    ...outputSchemaArg,
  },
  output: resultShape,
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  _meta: { [SEARCH_HINT]: "run the tests and summarise, build, lint, type check, noisy command" },
  run: async (args, { peer, delegations, extra }) => {
    const timeoutSeconds = args.timeout_seconds ?? RUNNER_TIMEOUT.fallback
    return startAndFollow(
      peer,
      delegations,
      {
        role: "runner",
        agent: runnerAgentName(args.workspace_access, args.network_access),
        cwd: args.cwd,
        brief: runnerBrief({
          command: args.command,
          objective: args.objective,
          expected: args.expected,
          timeoutSeconds,
          tool: RUNNER_TOOLS[args.workspace_access][args.network_access],
        }),
        title: sessionTitle("runner", args.command, args.label ?? delegations.runtime.flags.label),
        model: args.model,
        variant: args.variant,
        writable: args.workspace_access === "writable",
        policy: {
          mode: args.mode,
          tier: args.tier,
          delegation: { role: "runner", workspaceAccess: args.workspace_access, networkAccess: args.network_access },
          texts: { command: args.command, objective: args.objective, expected: args.expected },
        },
        idempotencyKey: args.idempotency_key,
        commandTimeoutS: timeoutSeconds,
        outputSchema: args.output_schema,
      },
      extra,
    )
  },
})
