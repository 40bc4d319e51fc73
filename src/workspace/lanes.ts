// Where an isolated worktree lives: a lane, `<worktrees>/lane-<n>/`, reused by one patch after
// another. OpenCode boots an instance per directory (about a CPU-second: config, plugins, project
// detection) and keeps it; a worker in a lane some earlier worker used finds its instance warm, which
// is most of what a fan-out of isolated workers costs beyond the model's time.
//
// A lane is held by a claim in the patch registry, `<registry>/lanes/lane-<n>.json` (under the state
// dir, which no sandbox mounts), created with link(2) so exactly one taker wins. The claim names its
// patch and the task the patch is for; it is live while that patch's record exists, or while the
// process creating it runs. The claim is also what admits the lane as a workspace, and only for its
// own patch when the engine continues a task there (sandbox/host-paths.ts engineWorktree).
import { mkdir, readdir, rm } from "node:fs/promises"
import { z } from "zod"
import { LANE_NAME } from "../sandbox"
import { holdsOrReclaim, linkExclusive } from "../util/claim-file"
import { statIfPresent, writeAtomic } from "../util/fs"
import { sameProcess, selfStart } from "../util/process"
import { readStateFile } from "../util/state-file"

/** No more lanes than this: each one is a directory OpenCode keeps an instance for. */
export const MAX_LANES = 64

const ClaimSchema = z.object({
  patchId: z.string().min(1),
  taskId: z.string().min(1).optional(),
  ownerPid: z.number().int(),
  ownerStart: z.string().optional(),
  since: z.string(),
})
type Claim = z.infer<typeof ClaimSchema>

const FIX = "The lane is free again; nothing else to do."

const lanesDir = (registry: string) => `${registry}/lanes`
const claimFile = (registry: string, lane: string) => `${lanesDir(registry)}/${lane}.json`
const laneName = (index: number) => `lane-${index}`

/** True while the claim's patch exists or its creator still runs; a stale claim is moved aside and removed. */
const live = (registry: string, file: string) => holdsOrReclaim(file, ClaimSchema, FIX, (claim) => held(registry, claim))

const held = async (registry: string, claim: Claim) => sameProcess(claim.ownerPid, claim.ownerStart) || (await statIfPresent(`${registry}/${claim.patchId}.json`)) !== undefined

/**
 * Claims a free lane for `patchId` (the lowest free one: the warmest instances are reused first) and
 * returns its name; its directory is the caller's to empty and fill.
 */
export async function claimLane(root: string, registry: string, patchId: string, taskId?: string): Promise<string> {
  await mkdir(lanesDir(registry), { recursive: true, mode: 0o700 })
  const temp = `${lanesDir(registry)}/.${patchId}.${process.pid}.tmp`
  const since = new Date().toISOString()
  const claim: Claim = { patchId, taskId, ownerPid: process.pid, ownerStart: selfStart(), since }
  await writeAtomic(temp, JSON.stringify(claim), 0o600)
  try {
    for (let index = 1; index <= MAX_LANES; index++) {
      const file = claimFile(registry, laneName(index))
      if (await live(registry, file)) continue
      if (await linkExclusive(temp, file)) return laneName(index)
    }
  } finally {
    await rm(temp, { force: true })
  }
  throw new Error(`all ${MAX_LANES} worktree lanes under ${root} hold patches; discard some (patch_discard) first`)
}

/** Frees the lane if `patchId` holds it (a claim taken over by another patch stays). */
export async function releaseLane(registry: string, lane: string, patchId: string): Promise<void> {
  if (!LANE_NAME.test(lane)) return
  const file = claimFile(registry, lane)
  const claim = await readStateFile(file, ClaimSchema, FIX)
  if (claim?.patchId === patchId) await rm(file, { force: true })
}

/** Who holds the lane now (its claim as written, live or not), or undefined when nobody's claim can be read. */
export async function laneHolder(registry: string, lane: string): Promise<Pick<Claim, "patchId" | "taskId"> | undefined> {
  if (!LANE_NAME.test(lane)) return undefined
  const claim = await readStateFile(claimFile(registry, lane), ClaimSchema, FIX)
  return claim && { patchId: claim.patchId, taskId: claim.taskId }
}

/** The lanes currently claimed, for listings and tests. */
export async function claimedLanes(registry: string): Promise<string[]> {
  const names = await readdir(lanesDir(registry)).catch(() => [] as string[]) // no lanes dir yet: none claimed
  return names.filter((name) => name.endsWith(".json") && LANE_NAME.test(name.slice(0, -5))).map((name) => name.slice(0, -5))
}
