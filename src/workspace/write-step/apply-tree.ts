// Where an apply stands, read from the files themselves: every path a patch touches has a before
// image (what the snapshot held, or nothing) and an after image (what the patch writes, or nothing),
// both in the patch's record; what the workspace holds at that path says which side of the apply it
// is on. This, not a journal or an error message, decides whether an interrupted apply is rolled
// back, rolled forward or mixed. Like the write step, node: builtins and the name escaper only.
import type { StepFile } from "./apply-targets"
import { entryOf } from "../git-objects"

/** What git records at a path: mode and blob id; undefined for nothing (a directory is no Git entry). */
export type Image = { mode: string; oid: string } | undefined

export interface PathImages {
  path: string
  before: Image
  after: Image
}

/**
 * Where a path stands: `before`/`after` as the snapshot or the patch has it; `missing` when nothing is
 * there though both images hold something (a rollback cut short between removing and restoring it);
 * `changed` when it holds something neither image has (someone else's, never ours to overwrite).
 */
export type PathState = "before" | "after" | "missing" | "changed"

export interface TreeState {
  /** Every path as before: nothing of the patch is written. */
  outcome: "rolled-back" | "rolled-forward" | "mixed"
  before: string[]
  after: string[]
  missing: string[]
  changed: string[]
}

/** Every path a patch touches with its two images: a rename's source goes, its target comes. Pure. */
export function imagesOf(files: StepFile[]): PathImages[] {
  const images: PathImages[] = []
  for (const file of files) {
    const old: Image = file.oldOid ? { mode: file.oldMode ?? "", oid: file.oldOid } : undefined
    const next: Image = file.newOid ? { mode: file.newMode ?? "", oid: file.newOid } : undefined
    if (file.oldPath && file.oldPath !== file.path) {
      images.push({ path: file.oldPath, before: old, after: undefined })
      images.push({ path: file.path, before: undefined, after: next })
    } else images.push({ path: file.path, before: old, after: next })
  }
  return images
}

const same = (now: Image, image: Image) => now?.mode === image?.mode && now?.oid === image?.oid

/** A path's state given what is there now (a directory counts as no file). Pure. */
export function stateOf(images: PathImages, now: Image): PathState {
  if (same(now, images.after)) return "after"
  if (same(now, images.before)) return "before"
  return now === undefined ? "missing" : "changed"
}

/** What is at `path` as an image: a directory (or nothing) is undefined. */
export async function imageAt(path: string): Promise<Image> {
  const entry = await entryOf(path)
  return entry?.mode === "directory" ? undefined : entry
}

/** The outcome of the paths' states. Pure. */
export function outcomeOf(states: Array<{ path: string; state: PathState }>): TreeState {
  const pick = (state: PathState) => states.filter((entry) => entry.state === state).map((entry) => entry.path)
  const tree = { before: pick("before"), after: pick("after"), missing: pick("missing"), changed: pick("changed") }
  const only = (list: string[]) => list.length === states.length
  const outcome = only(tree.after) ? "rolled-forward" : only(tree.before) ? "rolled-back" : "mixed"
  return { outcome, ...tree }
}

/** Where an apply of `files` into `workspace` stands, from the files. */
export async function treeState(workspace: string, files: StepFile[]): Promise<TreeState> {
  const states: Array<{ path: string; state: PathState }> = []
  for (const images of imagesOf(files))
    states.push({ path: images.path, state: stateOf(images, await imageAt(`${workspace}/${images.path}`)) })
  return outcomeOf(states)
}
