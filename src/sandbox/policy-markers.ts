// The workspace's policy markers, mounted read-only over it for every profile (as `.git` is): a marker
// is the person's statement of the mode, and a sandboxed command that could delete, rename or replace
// it (or its folder, by a link) would lower the mode of the next delegation. The folder is what is
// mounted, so the marker cannot be removed, nor the folder renamed or swapped for a link: each is a
// mount point, and the kernel refuses. Only real directories are mounted (a symlinked folder would be a
// mount redirected elsewhere; the product's memory of the mode, src/engine/admission/mode-memory.ts, covers it
// and every marker below the workspace's root).
import { MARKER_NAMES } from "../policy/mode"
import type { FsView } from "./fs-view"

/** The folders that hold policy markers: ours always, another tool's (`.claude`) only when a marker is in it. */
const FOLDERS = [...new Set(Object.values(MARKER_NAMES).flatMap((names) => names.map((name) => name.split("/")[0]!)))]
const OURS = ".opencode-mcp-orchestrator"

/** The marker folders at the workspace's root (canonical), to mount read-only; empty when there are none. */
export function policyMarkerFolders(workspace: string, fs: FsView): string[] {
  return FOLDERS.flatMap((folder) => {
    const path = `${workspace}/${folder}`
    if (fs.lstat(path) !== "dir" || fs.realpath(path) !== path) return []
    if (folder === OURS) return [path]
    const marked = Object.values(MARKER_NAMES)
      .flat()
      .some((name) => name.startsWith(`${folder}/`) && fs.lstat(`${workspace}/${name}`) !== undefined)
    return marked ? [path] : []
  })
}
