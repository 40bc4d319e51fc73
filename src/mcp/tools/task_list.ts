import { z } from "zod"
import { STATUSES, LIST_LIMIT, sizeText, shownName, PATCH_STATES, type PatchState } from "../../engine/terms"
import { defineTool } from "../define"
import { setAsideLines, setAsideRows, setAsideShape } from "./set_aside"
import description from "./task_list.md" with { type: "text" }
import { statusOfRecord, statusShape } from "./task_status"

export const taskList = defineTool({
  name: "task_list",
  title: "List tasks",
  description,
  input: {
    status: z.enum(STATUSES).optional(),
    cwd: z.string().min(1).optional(),
    limit: z.number().int().min(LIST_LIMIT.min).max(LIST_LIMIT.max).default(LIST_LIMIT.fallback),
  },
  output: {
    tasks: z.array(z.object(statusShape)),
    total: z.number(),
    patches: z
      .array(
        z.object({
          patch_id: z.string(),
          task_id: z.string().optional(),
          workspace: z.string(),
          state: z
            .enum(PATCH_STATES)
            .describe(
              "open: its worker runs; waiting: for patch_apply or patch_discard; applied: patch_discard removes it.",
            ),
          applied_at: z.string().optional(),
          files: z.number(),
          bytes: z.number().describe("The diff's size."),
          disk_bytes: z
            .number()
            .optional()
            .describe("What its worktree took on disk when its patch was last collected."),
          created_at: z.string(),
        }),
      )
      .optional()
      .describe(
        "Patches of isolated workers still stored, in the listed workspace when cwd is given; " +
          "each stays, applied or not, until patch_discard.",
      ),
    lanes: z
      .object({
        claimed: z.number(),
        max: z
          .number()
          .describe(
            "config maxWorktreeLanes: an isolated worker beyond it is refused, naming the oldest waiting patches.",
          ),
        disk_bytes: z.number().describe("Every worktree measured now, du-like; a lower bound when disk_partial."),
        disk_partial: z.boolean(),
      })
      .describe("Isolated worktrees: how many lanes are held and what they take on disk."),
    reclaimed_lanes: z
      .array(
        z.object({
          lane: z.string(),
          dir: z.string(),
          reason: z.string(),
          patch_id: z.string().optional(),
          at: z.string(),
        }),
      )
      .optional()
      .describe(
        "Lanes whose claim could not be read, or named a missing or unreadable patch record, " +
          "taken back once nothing held them (each reported once).",
      ),
    corrupt_files: setAsideShape,
  },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { delegations, engine }) => {
    const listing = await delegations.listTasks({ status: args.status, cwd: args.cwd, limit: args.limit })
    const tasks = listing.tasks.map((record) => statusOfRecord(engine, record))
    const lines = tasks.length
      ? tasks.map((t) => {
          const waiting = t.waiting_input ? "  waiting_input (task_respond)" : ""
          return `${t.task_id}  ${t.status.padEnd(12)} ${t.role.padEnd(7)} ${shownName(t.workspace)}${waiting}`
        })
      : ["No tasks."]
    const patches = listing.patches.map((patch) => ({
      patch_id: patch.id,
      task_id: patch.taskId,
      workspace: patch.workspace,
      state: patch.state,
      applied_at: patch.appliedAt,
      files: patch.files,
      bytes: patch.bytes,
      disk_bytes: patch.diskBytes,
      created_at: patch.createdAt,
    }))
    for (const patch of patches) {
      const next = patch.state === "applied" ? "patch_discard" : "patch_apply or patch_discard"
      lines.push(`${patch.patch_id}  ${patchLine(patch)} for ${shownName(patch.workspace)} (${next})`)
    }
    const state = listing.lanes
    const lanes = {
      claimed: state.claimed,
      max: state.max,
      disk_bytes: state.disk.bytes,
      disk_partial: state.disk.partial,
    }
    const disk = `${state.disk.partial ? "at least " : ""}${sizeText(lanes.disk_bytes)}`
    lines.push(`worktrees: ${lanes.claimed} of ${lanes.max} lanes held, ${disk} on disk`)
    const reclaimed = state.reclaimed.map((entry) => ({
      lane: entry.lane,
      dir: entry.dir,
      reason: entry.reason,
      patch_id: entry.patchId,
      at: entry.at,
    }))
    for (const entry of state.reclaimed) lines.push(engine.reclaimText(entry))
    // Reported once: each file this process set aside since the last listing (records, patches).
    lines.push(...setAsideLines(listing.setAside))
    const corrupt = setAsideRows(listing.setAside)
    return {
      text: lines.join("\n"),
      structured: {
        tasks,
        total: listing.total,
        lanes,
        ...(patches.length ? { patches } : {}),
        ...(reclaimed.length ? { reclaimed_lanes: reclaimed } : {}),
        ...(corrupt.length ? { corrupt_files: corrupt } : {}),
      },
    }
  },
})

/** A stored patch's state in the listing's words. Pure. */
function patchLine(patch: {
  state: PatchState
  files: number
  bytes: number
  disk_bytes?: number
  applied_at?: string
}): string {
  if (patch.state === "open") return "open (its worker runs)"
  const disk = patch.disk_bytes === undefined ? "" : `, ${sizeText(patch.disk_bytes)} on disk`
  if (patch.state === "applied") return `applied at ${patch.applied_at}: ${patch.files} files${disk}`
  return `waiting: ${patch.files} files, ${patch.bytes} bytes of diff${disk}`
}
