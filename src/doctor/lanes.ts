// Isolated worktrees as a budget: how many lanes are held against config maxWorktreeLanes, what they
// take on disk (measured, not the diffs' size), and any lane taken back from a claim that could not
// prove itself. All lanes held is a failure: no isolated worker can start until one is freed.
import { LANE_BOUNDS } from "../config/schema"
import { laneState } from "../engine/capacity"
import { sizeText } from "../workspace/disk"
import { reclaimText } from "../workspace/worktree"
import type { Check } from "./check"

export const lanes: Check = async (ctx) => {
  const max = ctx.config?.maxWorktreeLanes ?? LANE_BOUNDS.fallback
  const state = await laneState(ctx.paths, max)
  const disk =
    `${state.disk.partial ? "at least " : ""}${sizeText(state.disk.bytes)} on disk in ` + `${ctx.paths.worktreesDir}`
  const reclaimed = state.reclaimed.map((entry) => `; ${reclaimText(entry)}`).join("")
  const detail = `${state.claimed} of ${max} lanes held (config maxWorktreeLanes), ${disk}${reclaimed}`
  if (state.claimed < max) return [{ id: "lanes", status: "pass", detail }]
  return [
    {
      id: "lanes",
      status: "fail",
      detail: `${detail}: every lane is held, so isolated workers are refused`,
      fix:
        "patch_apply or patch_discard the oldest waiting patches (the patches check and task_list name them), " +
        "or raise maxWorktreeLanes in config.json.",
    },
  ]
}
