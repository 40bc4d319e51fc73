// Which patches of one delegate_parallel group would collide: two patches overlap on a file when
// both change it and the line ranges their hunks replace in the snapshot intersect (or touch, since
// git cannot apply two hunks at the same place either), or when either change is not line-based
// (binary, added, deleted, renamed or a mode change). Pure: patch texts in, overlaps out.
import { fileSections } from "./patch-sections"

export interface PatchEdits {
  /** Who made the patch (a task id). */
  owner: string
  text: string
}

export interface Overlap {
  path: string
  owners: string[]
}

/** A file's edited line ranges in the old file, [start, end) with end ≥ start + 1; undefined: the whole file. */
type Ranges = Array<[number, number]> | undefined

const HEADER = /^diff --git "?a\/(.*?)"? "?b\/(.*?)"?$/m
const HUNK = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/gm

/** Per path (both sides of a rename), the old-file line ranges the section's hunks replace. Pure. */
export function editedRanges(text: string): Map<string, Ranges> {
  const files = new Map<string, Ranges>()
  for (const section of fileSections(text)) {
    const header = HEADER.exec(section)
    if (!header) continue
    const [, oldPath, newPath] = header as unknown as [string, string, string]
    const whole =
      oldPath !== newPath || /^(new file|deleted file|old mode|Binary files|GIT binary patch)/m.test(section)
    const ranges: Array<[number, number]> = []
    for (const hunk of section.matchAll(HUNK)) {
      const start = Number(hunk[1])
      const count = hunk[2] === undefined ? 1 : Number(hunk[2])
      // A pure insertion (count 0) sits after line `start`: it touches that line.
      ranges.push(count === 0 ? [start, start + 1] : [start, start + count])
    }
    for (const path of new Set([oldPath, newPath]))
      files.set(path, whole || ranges.length === 0 ? undefined : [...(files.get(path) ?? []), ...ranges])
  }
  return files
}

const touch = (a: Ranges, b: Ranges) =>
  a === undefined || b === undefined || a.some(([s1, e1]) => b.some(([s2, e2]) => s1 <= e2 && s2 <= e1))

/** Every file two or more patches change at the same place, with the patches that do. Pure. */
export function overlaps(patches: PatchEdits[]): Overlap[] {
  const edits = patches.map((patch) => ({ owner: patch.owner, files: editedRanges(patch.text) }))
  const found = new Map<string, Set<string>>()
  for (let i = 0; i < edits.length; i++)
    for (let j = i + 1; j < edits.length; j++)
      for (const [path, ranges] of edits[i]!.files) {
        if (!edits[j]!.files.has(path) || !touch(ranges, edits[j]!.files.get(path))) continue
        const owners = found.get(path) ?? new Set<string>()
        owners.add(edits[i]!.owner).add(edits[j]!.owner)
        found.set(path, owners)
      }
  return [...found].map(([path, owners]) => ({ path, owners: [...owners] }))
}
