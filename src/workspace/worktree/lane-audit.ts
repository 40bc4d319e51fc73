// What a lane's claim is checked against when it cannot prove itself (lanes.ts): the patch records
// in the registry, read loosely (a record that fails here is never moved or changed: the patch store
// owns it), and the reclaims made, handed to the caller's bounds (onReclaim) for it to report once.
import { lstat, readdir, readFile } from "node:fs/promises"
import { z } from "zod"
import { PATCH_ID } from "../../sandbox"
import { stateJson } from "../../util/sealed"

export interface LaneBounds {
  /** config maxWorktreeLanes: no lane above it is claimed. */
  max: number
  /** True while an unfinished task's workspace lies in `dir` (a lane directory): its worker may still run there. */
  inUse(dir: string): Promise<boolean>
  /** Told of each lane taken back, to report it (engine/capacity/lanes.ts Reclaims); logged either way. */
  onReclaim?: (entry: LaneReclaim) => void
}

/** A lane taken back from a claim that could not prove it held. */
export interface LaneReclaim {
  lane: string
  dir: string
  reason: string
  patchId?: string
  at: string
}

/** A reclaim, stamped and logged, for the caller to report. */
export function noteReclaim(entry: Omit<LaneReclaim, "at">): LaneReclaim {
  process.stderr.write(
    `opencode-mcp-orchestrator: reclaimed worktree ${entry.lane}: ${entry.reason}, and no process or unfinished ` +
      `task holds it.\n`,
  )
  return { ...entry, at: new Date().toISOString() }
}

/** The one line a listing shows for a reclaim. */
export const reclaimText = (entry: LaneReclaim) =>
  `reclaimed worktree ${entry.lane} (${entry.dir}): ${entry.reason}; no process, readable patch record or ` +
  `unfinished task held it, so its files go to the next isolated worker`

/**
 * A state file's text, or undefined when it is absent, or `\0<why>` when it cannot be read. Links are
 * not followed and only regular files are read: a FIFO or a link put in a claim's place never hangs a read.
 */
export async function regularText(file: string): Promise<string | undefined> {
  const info = await lstat(file).catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? undefined : error))
  if (info === undefined) return undefined
  if (info instanceof Error || !info.isFile())
    return `\0${info instanceof Error ? (info.code ?? "unreadable") : "not a regular file"}`
  return readFile(file, "utf8").catch((error: NodeJS.ErrnoException) =>
    error.code === "ENOENT" ? undefined : `\0${error.code ?? "unreadable"}`,
  )
}

/** What holds a lane: the record's id and worktree. The rest is detail for listings, each part optional. */
const HoldSchema = z.looseObject({ id: z.string(), layout: z.looseObject({ dir: z.string() }) })
const DetailSchema = z.looseObject({
  status: z.enum(["open", "ready"]).catch("open"),
  createdAt: z.string().catch(""),
  source: z.looseObject({ workspace: z.string() }).catch({ workspace: "" }),
  disk: z.looseObject({ bytes: z.number().nonnegative(), partial: z.boolean() }).optional().catch(undefined),
  digest: z.string().optional().catch(undefined),
  appliedDigest: z.string().optional().catch(undefined),
})

export type PatchRef =
  | {
      kind: "ok"
      id: string
      dir: string
      status: "open" | "ready"
      applied: boolean
      createdAt: string
      workspace: string
      disk?: { bytes: number; partial: boolean }
    }
  | { kind: "absent" }
  | { kind: "bad"; reason: string }

/** The patch record `id` as far as a lane needs it; never moves or changes the file. */
export async function patchRef(registry: string, id: string): Promise<PatchRef> {
  if (!PATCH_ID.test(id)) return { kind: "bad", reason: "the claim names no valid patch id" }
  const text = await regularText(`${registry}/${id}.json`)
  if (text === undefined) return { kind: "absent" }
  if (text.startsWith("\0")) return { kind: "bad", reason: JSON.stringify(text.slice(1, 40)) }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    // The reason is the answer: a hold that is not JSON is bad.
    return { kind: "bad", reason: "not JSON" }
  }
  const parsed = HoldSchema.safeParse(json)
  if (!parsed.success) return { kind: "bad", reason: "not a patch record" }
  if (parsed.data.id !== id) return { kind: "bad", reason: `its id is ${JSON.stringify(parsed.data.id.slice(0, 80))}` }
  const { layout } = parsed.data
  // A detail that fails its shape (a garbage disk figure, say) never costs the patch its lane.
  const detail = DetailSchema.safeParse(json)
  const { status, createdAt, source, disk, digest, appliedDigest } = detail.success
    ? detail.data
    : {
        status: "open" as const,
        createdAt: "",
        source: { workspace: "" },
        disk: undefined,
        digest: undefined,
        appliedDigest: undefined,
      }
  const applied = status === "ready" && digest !== undefined && appliedDigest === digest
  return {
    kind: "ok",
    id,
    dir: layout.dir,
    status,
    applied,
    createdAt,
    workspace: source.workspace,
    disk: disk && { bytes: disk.bytes, partial: disk.partial },
  }
}

export async function patchIds(registry: string): Promise<string[]> {
  const names = await readdir(registry).catch(() => [] as string[]) // no registry yet: no patches
  return names
    .filter((name) => name.endsWith(".json") && PATCH_ID.test(name.slice(0, -5)))
    .map((name) => name.slice(0, -5))
}

/** True when a readable patch record names `dir` as its worktree: its patch is kept whatever its claim says. */
export async function recordNaming(registry: string, dir: string): Promise<boolean> {
  for (const id of await patchIds(registry)) {
    const ref = await patchRef(registry, id)
    if (ref.kind === "ok" && ref.dir === dir) return true
  }
  return false
}

export interface HeldPatch {
  id: string
  status: "open" | "ready" | "unreadable"
  /** Its patch was applied (patch_discard frees the lane). */
  applied?: boolean
  createdAt: string
  workspace: string
}

/** The patches holding lanes 1..max (the claims' own), oldest first, for the refusal when none is free. */
export async function oldestHeld(registry: string, max: number): Promise<HeldPatch[]> {
  const held: HeldPatch[] = []
  for (let index = 1; index <= max; index++) {
    const claim = await regularText(`${registry}/lanes/lane-${index}.json`)
    const id = claim === undefined ? undefined : claimedPatch(claim)
    const ref = id ? await patchRef(registry, id) : undefined
    if (ref?.kind === "ok")
      held.push({
        id: ref.id,
        status: ref.status,
        applied: ref.applied,
        createdAt: ref.createdAt,
        workspace: ref.workspace,
      })
    else held.push({ id: id ?? `lane-${index}`, status: "unreadable", createdAt: "", workspace: "" })
  }
  return held.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
}

function claimedPatch(text: string): string | undefined {
  try {
    // Claims are sealed state files (util/sealed.ts): one that fails its own check names no patch.
    const body = stateJson(text)
    if ("problem" in body) return undefined
    const claim: unknown = JSON.parse(body.json)
    const id = typeof claim === "object" && claim !== null && "patchId" in claim ? claim.patchId : undefined
    return typeof id === "string" ? id : undefined
  } catch {
    // Not JSON: the claim names no patch.
    return undefined
  }
}
