// Finds the Git metadata a workspace carries so the planner can mount it read-only over a writable
// workspace: `.git` itself, or for a linked worktree or submodule the `.git` pointer file, the gitdir it
// names and that gitdir's common dir. The pointer files are workspace content, so every target is
// canonicalized and checked like any other mount source (a `gitdir: /root/.ssh` must not mount ~/.ssh).
import { fail } from "../errors"
import type { FsView } from "./fs-view"
import { isInside, refusal, type PathRules } from "./host-paths"

function refuse(workspace: string, why: string): never {
  throw fail("Sandbox", `Refusing workspace ${workspace}: its Git metadata ${why}.`, "Repair the repository's .git (git worktree repair, or re-clone), then retry.", { workspace })
}

function pointer(text: string | undefined, prefix: string): string | undefined {
  const line = text?.split("\n")[0]?.trim()
  if (!line?.startsWith(prefix)) return undefined
  const value = line.slice(prefix.length).trim()
  return value === "" ? undefined : value
}

const resolveFrom = (base: string, target: string) => (target.startsWith("/") ? target : `${base}/${target}`)

/** A canonical, allowed Git directory (HEAD inside), or a refusal. */
function gitDirectory(workspace: string, raw: string, what: string, rules: PathRules, fs: FsView): string {
  const canonical = fs.realpath(raw)
  if (!canonical || fs.lstat(canonical) !== "dir") refuse(workspace, `${what} ${raw} does not exist`)
  const why = refusal(canonical, "gitdir", rules, fs)
  if (why) refuse(workspace, `${what} ${canonical} cannot be mounted: ${why}`)
  if (fs.lstat(`${canonical}/HEAD`) !== "file") refuse(workspace, `${what} ${canonical} is not a Git directory`)
  // Mounted read-only before the workspace, a gitdir that contains it would expose its siblings.
  if (isInside(workspace, canonical)) refuse(workspace, `${what} ${canonical} contains the workspace`)
  return canonical
}

/**
 * Canonical paths to mount read-only, in mount order (the workspace's own `.git` entry first). Empty
 * when the workspace has no `.git`.
 */
export function gitMetadataPaths(workspace: string, rules: PathRules, fs: FsView): string[] {
  const dotGit = `${workspace}/.git`
  const kind = fs.lstat(dotGit)
  if (kind === undefined) return []
  if (kind === "dir") return [dotGit]
  // A symlinked .git could send the read-only mount (or, on old bwrap, a mount point) anywhere.
  if (kind !== "file") refuse(workspace, `entry ${dotGit} is a ${kind}, not a directory or a gitdir file`)
  const target = pointer(fs.readText(dotGit), "gitdir:")
  if (!target) refuse(workspace, `file ${dotGit} has no "gitdir:" line`)
  const gitdir = gitDirectory(workspace, resolveFrom(workspace, target), "gitdir", rules, fs)
  const paths = [dotGit, gitdir]
  const common = fs.readText(`${gitdir}/commondir`)?.split("\n")[0]?.trim()
  if (common) paths.push(gitDirectory(workspace, resolveFrom(gitdir, common), "commondir", rules, fs))
  return [...new Set(paths)]
}
