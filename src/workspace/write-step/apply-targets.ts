// The checks patch_apply's write step makes before it writes (apply-step.ts): every target holds what
// the snapshot held, no parent is a symlink, nothing is in the way; and git's view of a path (mode and
// blob id, git-objects.ts) they compare with. Like the step, it imports only node: builtins, the name
// escaper and git's object ids.
import { lstat, readdir } from "node:fs/promises"
import { entryOf } from "../git-objects"
import { shownName } from "../names"

/** What the step needs of a patch's file entry (patches.ts PatchFile). */
export interface StepFile {
  path: string
  oldPath?: string
  oldMode?: string
  newMode?: string
  oldOid?: string
  newOid?: string
}

export class StepError extends Error {
  constructor(
    readonly refused: boolean,
    message: string,
    readonly hint: string,
  ) {
    super(message)
  }
}

export const refuse = (message: string, hint: string): never => {
  throw new StepError(true, message, hint)
}

/** Paths the patch deletes or renames away: gone before anything is written. */
export const removedPaths = (files: StepFile[]) =>
  new Set(files.filter((file) => file.oldPath || !file.newOid).map((file) => file.oldPath ?? file.path))

/**
 * The first directory between `root` and `path` that is a symlink or not a directory, if any. A file
 * or symlink the patch removes (`removed`) is gone before anything is written: below it is new ground.
 */
export async function badParent(root: string, path: string, removed: Set<string>): Promise<string | undefined> {
  const parts = path.split("/").slice(0, -1)
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join("/")
    const info = await lstat(`${root}/${dir}`).catch(() => undefined) // a missing directory is created on apply
    if (!info || (!info.isDirectory() && removed.has(dir))) return undefined
    if (info.isSymbolicLink()) return `${dir} is a symlink`
    if (!info.isDirectory()) return `${dir} is not a directory`
  }
  return undefined
}

/** True when `dir` holds nothing but files the patch removes (it is pruned before a file takes its place). */
async function emptiedBy(root: string, dir: string, removed: Set<string>): Promise<boolean> {
  const entries = await readdir(`${root}/${dir}`, { recursive: true })
  for (const entry of entries) {
    const info = await lstat(`${root}/${dir}/${entry}`)
    if (!info.isDirectory() && !removed.has(`${dir}/${entry}`)) return false
  }
  return true
}

/** Every target holds what the snapshot held, no parent is a symlink, nothing is in the way. */
export async function checkTargets(workspace: string, files: StepFile[]) {
  const removed = removedPaths(files)
  for (const file of files) {
    for (const path of [file.path, file.oldPath].filter((p): p is string => p !== undefined)) {
      const parent = await badParent(workspace, path, removed)
      if (parent)
        refuse(
          `a parent directory of ${shownName(path)} is not a plain directory: ${parent}.`,
          "Restore that directory (a symlink is never followed), then retry.",
        )
    }
    const source = file.oldPath ?? file.path
    const now = await entryOf(`${workspace}/${source}`)
    if (file.oldOid) {
      if (!now || now.oid !== file.oldOid || now.mode !== file.oldMode)
        refuse(
          `${shownName(source)} changed since the snapshot.`,
          "Review the patch against the file as it is now (patch_show) and apply the change by hand, or run the " +
            "worker again.",
        )
    } else if (now && !(now.mode === "directory" && (await emptiedBy(workspace, source, removed))))
      refuse(
        `${shownName(source)} exists, but the patch creates it.`,
        "Move that file aside, or apply the change by hand.",
      )
    const target = file.oldPath && file.oldPath !== file.path ? await entryOf(`${workspace}/${file.path}`) : undefined
    if (
      target &&
      !removed.has(file.path) &&
      !(target.mode === "directory" && (await emptiedBy(workspace, file.path, removed)))
    )
      refuse(
        `${shownName(file.path)} exists, but the patch renames ${shownName(file.oldPath ?? "")} onto it.`,
        "Move that file aside, or apply the change by hand.",
      )
  }
}
