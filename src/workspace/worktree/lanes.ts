// Where an isolated worktree lives: a lane, `<worktrees>/lane-<n>/`, reused by one patch after
// another. OpenCode boots an instance per directory (about a CPU-second: config, plugins, project
// detection) and keeps it; a worker in a lane some earlier worker used finds its instance warm, which
// is most of what a fan-out of isolated workers costs beyond the model's time.
//
// A lane is held by a claim in the patch registry, `<registry>/lanes/lane-<n>.json` (under the state
// dir, which no sandbox mounts), created with link(2) so exactly one taker wins. The claim names its
// patch and the task the patch is for; it is live while that patch's record can be read and names
// this lane (before the record is first written, while the process creating it runs). The claim is also what admits the
// lane as a
// workspace, and only for its own patch when the engine continues a task there
// (sandbox/host-paths.ts engineWorktree).
//
// Lanes are a budget (config maxWorktreeLanes): when every lane holds a patch, a new isolated worker
// is refused before any session, naming the oldest waiting patches to apply or discard. A claim that
// cannot be read, or whose patch record is missing or cannot be read, is taken back only once nothing
// else says the lane is in use (no readable patch record names it, no unfinished task runs in it),
// and each such reclaim is reported (lane-audit.ts).
import { lstat, mkdir, readdir, rm } from "node:fs/promises"
import { z } from "zod"
import { fail } from "../../errors"
import { LANE_NAME } from "../../sandbox"
import { linkExclusive, removeJudged, writeClaim } from "../../util/claim-file"
import { sameProcess, selfStart } from "../../util/process"
import { stateJson } from "../../util/sealed"
import { oldestHeld, type LaneBounds, noteReclaim, patchRef, recordNaming, regularText } from "./lane-audit"

export type { LaneBounds } from "./lane-audit"

/** The default of config maxWorktreeLanes (config/schema.ts LANE_BOUNDS), for callers without a config. */
export const MAX_LANES = 64

const ClaimSchema = z.object({
  patchId: z.string().min(1),
  taskId: z.string().min(1).optional(),
  ownerPid: z.number().int(),
  ownerStart: z.string().optional(),
  since: z.string(),
})
type Claim = z.infer<typeof ClaimSchema>

export const lanesDir = (registry: string) => `${registry}/lanes`
const claimFile = (registry: string, lane: string) => `${lanesDir(registry)}/${lane}.json`
const laneName = (index: number) => `lane-${index}`

/** The claim's text as read (a marker for one that cannot be read), or undefined when there is none. */
const claimText = regularText

function parseClaim(text: string): Claim | undefined {
  const body = stateJson(text)
  if ("problem" in body) return undefined // fails its checksum: no claim is read from it
  try {
    const parsed = ClaimSchema.safeParse(JSON.parse(body.json))
    return parsed.success ? parsed.data : undefined
  } catch {
    // Not JSON: no claim is read from it, which callers treat as a claim that cannot be read.
    return undefined
  }
}

type LaneHolding = { held: true } | { held: false; text?: string; reason?: string; patchId?: string }

/** How long a claim holds on its creator's life alone: createWorktree writes the patch record right after. */
const CREATING_MS = 60_000

/**
 * Whether the lane is held, and if not, why its claim (if any) no longer holds. A live process is not
 * enough (a claim naming some unrelated process would hold for as long as it runs): its creator holds
 * it only until the patch record exists, and from then on the record does.
 */
async function examine(
  registry: string,
  worktrees: string,
  lane: string,
  bounds: Pick<LaneBounds, "inUse">,
): Promise<LaneHolding> {
  const text = await claimText(claimFile(registry, lane))
  if (text === undefined) return { held: false }
  const claim = parseClaim(text)
  const dir = `${worktrees}/${lane}`
  let reason = "its claim cannot be read"
  if (claim) {
    const ref = await patchRef(registry, claim.patchId)
    if (ref.kind === "ok" && ref.dir === dir) return { held: true }
    // A `since` in the future is no claim to freshness.
    const age = Date.now() - Date.parse(claim.since)
    if (age >= 0 && age < CREATING_MS && sameProcess(claim.ownerPid, claim.ownerStart)) return { held: true }
    reason =
      ref.kind === "absent"
        ? `its patch ${claim.patchId} has no record`
        : ref.kind === "ok"
          ? `its patch ${claim.patchId}'s record names another worktree`
          : `its patch ${claim.patchId}'s record cannot be read (${ref.reason})`
  }
  // A damaged claim or record: anything else that says the lane is in use keeps it held.
  if (await recordNaming(registry, dir)) return { held: true }
  if (await bounds.inUse(dir)) return { held: true }
  return { held: false, text, reason, patchId: claim?.patchId }
}

/**
 * True while the lane is held; a claim that no longer holds is removed, and only that very claim: under
 * the reclaim lock (util/claim-file.ts removeJudged), while the name still links the file judged and it
 * is judged gone again. A move-aside-then-put-back would leave the name empty while a live taker's claim
 * was aside, and a third taker linking then would share the lane with the one displaced.
 */
async function live(
  registry: string,
  worktrees: string,
  lane: string,
  bounds: Pick<LaneBounds, "inUse" | "onReclaim">,
): Promise<boolean> {
  const file = claimFile(registry, lane)
  const judged = await lstat(file).catch(() => undefined) // absent: free, as examine says next
  const verdict = await examine(registry, worktrees, lane, bounds)
  if (verdict.held || verdict.text === undefined || !judged) return verdict.held
  // A directory planted at the name is no taker's claim (takers link files): removing it displaces nobody.
  if (judged.isDirectory()) {
    await rm(file, { force: true, recursive: true })
    return reclaimed(worktrees, lane, verdict, bounds)
  }
  const outcome = await removeJudged(file, judged, async () => {
    const again = await examine(registry, worktrees, lane, bounds)
    if (again.held || again.text !== verdict.text) return again.held || again.text !== undefined ? "held" : "free"
    return "gone"
  })
  if (outcome === "removed") return reclaimed(worktrees, lane, verdict, bounds)
  return outcome === "held"
}

function reclaimed(
  worktrees: string,
  lane: string,
  verdict: Extract<LaneHolding, { held: false }>,
  bounds: Pick<LaneBounds, "onReclaim">,
): false {
  const entry = noteReclaim({
    lane,
    dir: `${worktrees}/${lane}`,
    reason: verdict.reason ?? "its claim no longer holds",
    patchId: verdict.patchId,
  })
  bounds.onReclaim?.(entry)
  return false
}

/**
 * Claims a free lane for `patchId` (the lowest free one: the warmest instances are reused first) and
 * returns its name; its directory is the caller's to empty and fill. When all `bounds.max` lanes are
 * held, refuses with the oldest waiting patches to apply or discard.
 */
export async function claimLane(
  root: string,
  registry: string,
  patchId: string,
  taskId: string | undefined,
  bounds: LaneBounds,
): Promise<string> {
  await mkdir(lanesDir(registry), { recursive: true, mode: 0o700 })
  const temp = `${lanesDir(registry)}/.${patchId}.${process.pid}.tmp`
  const since = new Date().toISOString()
  const claim: Claim = { patchId, taskId, ownerPid: process.pid, ownerStart: selfStart(), since }
  await writeClaim(temp, claim)
  try {
    for (let index = 1; index <= bounds.max; index++) {
      const lane = laneName(index)
      if (await live(registry, root, lane, bounds)) continue
      if (await linkExclusive(temp, claimFile(registry, lane))) return lane
    }
  } finally {
    await rm(temp, { force: true })
  }
  throw await lanesFull(registry, bounds.max)
}

/** The refusal when every lane is held: what holds them, and which patches to apply or discard first. */
async function lanesFull(registry: string, max: number) {
  const held = await oldestHeld(registry, max)
  const waiting = held.filter((patch) => patch.status === "ready" && !patch.applied)
  const applied = held.filter((patch) => patch.applied)
  const named = waiting.slice(0, 10).map((patch) => `${patch.id} (for ${patch.workspace}, since ${patch.createdAt})`)
  const more = waiting.length > named.length ? `, and ${waiting.length - named.length} more (task_list)` : ""
  const first = named.length
    ? `Review and patch_apply, or patch_discard, the oldest waiting patches first: ${named.join(", ")}${more}.`
    : applied.length
      ? `patch_discard the applied patches: ${applied
          .slice(0, 10)
          .map((patch) => patch.id)
          .join(", ")}.`
      : "Wait for the running isolated workers to finish (task_status), then patch_apply or patch_discard their " +
        "patches."
  return fail(
    "Delegation",
    `All ${max} worktree lanes (config maxWorktreeLanes) are held: ${waiting.length} by patches waiting for ` +
      `review, ${applied.length} by applied patches not yet discarded, ` +
      `${held.length - waiting.length - applied.length} by workers still running or patches that cannot be read; ` +
      `no isolated worker can start until one is freed.`,
    `${first} Or raise maxWorktreeLanes in config.json, or delegate with isolation "in_place".`,
    { maxWorktreeLanes: max, waiting: waiting.map((patch) => patch.id) },
  )
}

/** Frees the lane if `patchId` holds it (a claim taken over by another patch stays). */
export async function releaseLane(registry: string, lane: string, patchId: string): Promise<void> {
  if (!LANE_NAME.test(lane)) return
  const file = claimFile(registry, lane)
  // A claim that cannot be read is not known to be this patch's: it is left to the audit (live above).
  const text = await claimText(file)
  if (text !== undefined && parseClaim(text)?.patchId === patchId) await rm(file, { force: true })
}

/** Who holds the lane now (its claim as written, live or not), or undefined when nobody's claim can be read. */
export async function laneHolder(
  registry: string,
  lane: string,
): Promise<Pick<Claim, "patchId" | "taskId"> | undefined> {
  if (!LANE_NAME.test(lane)) return undefined
  const text = await claimText(claimFile(registry, lane))
  const claim = text === undefined ? undefined : parseClaim(text)
  return claim && { patchId: claim.patchId, taskId: claim.taskId }
}

/** The lanes currently claimed, for listings and tests. */
export async function claimedLanes(registry: string): Promise<string[]> {
  const names = await readdir(lanesDir(registry)).catch(() => [] as string[]) // no lanes dir yet: none claimed
  return names
    .filter((name) => name.endsWith(".json") && LANE_NAME.test(name.slice(0, -5)))
    .map((name) => name.slice(0, -5))
}

/** Every claimed lane examined, and the ones that no longer hold taken back and reported (doctor, task_list). */
export async function auditLanes(
  registry: string,
  worktrees: string,
  bounds: Pick<LaneBounds, "inUse" | "onReclaim">,
): Promise<void> {
  for (const lane of await claimedLanes(registry)) await live(registry, worktrees, lane, bounds)
}
