// Which repositories a directory lies in, for the policy markers and the autorun list. The nearest
// `.git` alone cannot decide it: a worker creates `pkg/.git` (an empty directory, `git init`, a
// pointer file) as easily as any file, and the repository around it would stop counting. So every
// enclosing repository counts, except beyond a linked worktree that git itself links to the one
// around it (its gitdir inside that repository's read-only `.git`, naming this `.git` back), such as
// `.claude/worktrees/x`: that is a checkout of its own, whose files are not the outer one's. Pure.
import { dirname, relative } from "node:path"
import type { FsView } from "./fs-view"
import { isInside } from "./host-paths"

const firstLine = (text: string | undefined) => text?.split("\n")[0]?.trim()

/** True when `inner` is a linked worktree of the repository at `outer`, by git's own two-way link. */
function linkedWorktreeOf(inner: string, outer: string, fs: FsView): boolean {
  const line = firstLine(fs.readText(`${inner}/.git`))
  if (!line?.startsWith("gitdir:")) return false
  const target = line.slice("gitdir:".length).trim()
  const gitdir = target && fs.realpath(target.startsWith("/") ? target : `${inner}/${target}`)
  const common = fs.lstat(`${outer}/.git`) === "dir" ? fs.realpath(`${outer}/.git`) : undefined
  if (!gitdir || !common || gitdir === common || !isInside(gitdir, common)) return false
  const back = firstLine(fs.readText(`${gitdir}/gitdir`))
  return back !== undefined && back !== "" && fs.realpath(back) === fs.realpath(`${inner}/.git`)
}

/** Every directory from `dir` up that holds a `.git`, nearest first, stopping past a linked worktree's own root. */
export function repositoryRoots(dir: string, fs: FsView): string[] {
  const roots: string[] = []
  for (let at = dir; ; at = dirname(at)) {
    if (fs.lstat(`${at}/.git`)) {
      const inner = roots.at(-1)
      if (inner && linkedWorktreeOf(inner, at, fs)) return roots
      roots.push(at)
    }
    if (at === "/" || at === ".") return roots
  }
}

/** Where `workspace` lies in each repository that holds it, nearest first ("" at a root; [""] outside any). */
export function repositoryPrefixes(workspace: string, fs: FsView): string[] {
  const roots = repositoryRoots(workspace, fs)
  return roots.length ? roots.map((root) => relative(root, workspace)) : [""]
}
