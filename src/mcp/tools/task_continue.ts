import { z } from "zod"
import { checkTaskId } from "../../engine/terms"
import { continueAndFollow } from "../calls"
import { defineTool } from "../define"
import { mechanicalArg, policyArgs, resultShape } from "../shared"
import description from "./task_continue.md" with { type: "text" }

export const taskContinue = defineTool({
  name: "task_continue",
  title: "Continue a finished task",
  description,
  input: {
    task_id: z.string().min(1),
    task: z.string().min(1).describe("The rework and how to verify it."),
    // The rework passes the policy as a new call does: its own tier, mode and (a worker's) mechanical.
    ...policyArgs,
    ...mechanicalArg,
  },
  output: resultShape,
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  run: async (args, { peer, delegations, extra }) => {
    checkTaskId(args.task_id)
    const call = { tier: args.tier, mode: args.mode, mechanical: args.mechanical }
    return continueAndFollow(peer, delegations, args.task_id, args.task, extra, call)
  },
})
