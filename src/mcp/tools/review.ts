import { z } from "zod"
import { startAndFollow } from "../calls"
import { defineTool } from "../define"
import { resultShape } from "../shared"
import description from "./review.md" with { type: "text" }

export const review = defineTool({
  name: "review",
  title: "Review a patch or uncommitted changes (read-only)",
  description,
  input: {
    patch_id: z.string().min(1).optional(),
    cwd: z.string().min(1).optional(),
    brief: z.string().min(1),
  },
  output: resultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { peer, delegations, extra }) =>
    startAndFollow(
      peer,
      delegations,
      await delegations.reviewRequest({ patchId: args.patch_id, cwd: args.cwd }, args.brief),
      extra,
    ),
})
