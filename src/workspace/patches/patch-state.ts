// A patch's state as the parent sees it, decided from its record alone: zod-free and pure, so the MCP
// tools' schemas name the states without loading the patch store (patches.ts re-exports them).
export const PATCH_STATES = ["open", "waiting", "applied"] as const
export type PatchState = (typeof PATCH_STATES)[number]

/** open: its worker runs (or its work was not stored); waiting: for patch_apply or patch_discard; applied. Pure. */
export function patchState(record: { status: string; digest?: string; appliedDigest?: string }): PatchState {
  if (record.status !== "ready") return "open"
  return record.appliedDigest !== undefined && record.appliedDigest === record.digest ? "applied" : "waiting"
}
