import { z } from "zod"
import { CHANGE_KINDS, MAX_PATCH_PAGE, fileChange, PATCH_STATES } from "../../engine/terms"
import { defineTool } from "../define"
import description from "./patch_show.md" with { type: "text" }

const fileShape = z.object({
  path: z.string(),
  old_path: z.string().optional(),
  change: z.enum(CHANGE_KINDS),
  additions: z.number(),
  deletions: z.number(),
  binary: z.boolean(),
  link_target: z.string().optional(),
})

export const patchShow = defineTool({
  name: "patch_show",
  title: "Show a patch",
  description,
  input: {
    patch_id: z.string().min(1),
    file: z.string().min(1).optional(),
    offset: z.number().int().min(0).optional().describe("The last next_offset."),
    limit: z.number().int().min(1000).max(MAX_PATCH_PAGE).optional(),
  },
  output: {
    patch_id: z.string(),
    state: z.enum(PATCH_STATES),
    applied_at: z.string().optional(),
    digest: z.string().optional().describe("Pass it to patch_apply."),
    workspace: z.string(),
    summary: z.string().optional(),
    files: z.array(fileShape),
    diff: z.string().describe("This page of the diff: characters offset to offset + its length of total."),
    offset: z.number(),
    total: z.number(),
    next_offset: z.number().optional().describe("Pass it back as offset for the next page."),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { delegations }) => {
    const page = await delegations.patches.show(args.patch_id, args)
    const { record, state, offset, end, total, next } = page
    const applied = state === "applied" ? ` at ${record.appliedAt} (patch_discard removes it)` : ""
    const more = next === undefined ? "" : ` · next_offset ${next}`
    const at = `characters ${offset}-${end} of ${total}${more}`
    const header = `patch ${record.id} · ${state}${applied} · digest ${record.digest} · ${at}`
    return {
      text: `${header}\n${record.summary ?? ""}\n\n${page.diff}`,
      structured: {
        patch_id: record.id,
        state,
        applied_at: state === "applied" ? record.appliedAt : undefined,
        digest: record.digest,
        workspace: record.source.workspace,
        summary: record.summary,
        files: page.files.map((file) => ({ ...fileChange(file), link_target: file.linkTarget })),
        diff: page.diff,
        offset,
        total,
        next_offset: next,
      },
    }
  },
})
