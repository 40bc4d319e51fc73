import { z } from "zod"
import { startAndFollow } from "../calls"
import { defineTool } from "../define"
import { resultShape } from "../shared"
import description from "./review.md" with { type: "text" }

export const review = defineTool({
  name: "review",
  title: "Review a patch (read-only)",
  description,
  input: {
    patch_id: z.string().min(1),
    brief: z.string().min(1),
  },
  output: resultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { server, delegations, extra }) =>
    startAndFollow(server, delegations, await delegations.reviewRequest(args.patch_id, args.brief), extra),
})
