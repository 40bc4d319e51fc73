// Finds the Git metadata a workspace carries so the planner can mount it read-only over a writable
// workspace: `.git` itself, or for a linked worktree or submodule the `.git` pointer file, the gitdir it
// names and that gitdir's common dir. The pointer is workspace content (an archive, or a worker's shell,
// can plant `gitdir: ../victim/.git`), so it is followed only along a link git made in both directions,
// whose far end lives in the other repository where no sandbox writes:
// - a linked worktree: the gitdir is `<common>/worktrees/<name>`, its `commondir` names `<common>` and its
//   `gitdir` file names this workspace's `.git` (what `git worktree add` writes);
// - a submodule (or any gitdir without a common dir, e.g. `--separate-git-dir` with the link added):
//   the gitdir's config sets `core.worktree` to this workspace (what `git submodule` writes), read as a
//   file, never by running git in the untrusted repository.
// Every end is canonicalized and checked like any other mount source (never HOME, a credential or
// tool-state store). Anything else is refused, and so is a `.git` directory naming a common dir.
import { fail } from "../errors"
import type { FsView } from "./fs-view"
import { isInside, refusal, type PathRules } from "./host-paths"

function refuse(workspace: string, why: string, hint = REPAIR): never {
  throw fail("Sandbox", `Refusing workspace ${workspace}: its Git metadata ${why}.`, hint, { workspace })
}

const REPAIR = "Repair the repository's .git (git worktree repair, or re-clone), then retry."

/** The fix for a pointer with no link back: make the link two-way if it is yours, else remove it. */
const unlinkedHint = (dotGit: string, gitdir: string, workspace: string) =>
  `If you made this link, let git record it both ways (\`git worktree repair ${workspace}\` for a moved worktree, or ` +
  `\`git --git-dir=${gitdir} config core.worktree ${workspace}\`); if you did not (a delegated agent or an archive ` +
  `may have planted it), delete ${dotGit}. Then retry.`

/** The first line of a small text file, trimmed; undefined when absent or empty. */
function firstLine(text: string | undefined): string | undefined {
  const line = text?.split("\n")[0]?.trim()
  return line ? line : undefined
}

function pointer(text: string | undefined, prefix: string): string | undefined {
  const line = firstLine(text)
  if (!line?.startsWith(prefix)) return undefined
  const value = line.slice(prefix.length).trim()
  return value === "" ? undefined : value
}

const resolveFrom = (base: string, target: string) => (target.startsWith("/") ? target : `${base}/${target}`)
const parentOf = (path: string) => path.slice(0, path.lastIndexOf("/")) || "/"

/**
 * `core.worktree` from a Git config file's text, or undefined when it is not set plainly. Git's last
 * assignment wins; a value with escapes, or one this reader cannot be sure of, counts as no link.
 */
export function coreWorktree(config: string | undefined): string | undefined {
  if (!config) return undefined
  let section = ""
  let value: string | undefined
  for (const raw of config.split("\n")) {
    const line = raw.trim()
    const header = /^\[\s*([A-Za-z0-9.-]+)\s*(?:"[^"]*")?\s*\]/.exec(line)
    if (header) {
      section = line.includes('"') ? `${header[1]!.toLowerCase()}."` : header[1]!.toLowerCase()
      continue
    }
    if (section !== "core") continue
    const entry = /^worktree\s*=\s*(.*)$/i.exec(line)
    if (!entry) continue
    let text = entry[1]!.replace(/\s+[#;].*$/, "").trim()
    if (/^"[^"\\]*"$/.test(text)) text = text.slice(1, -1)
    value = text === "" || /["\\]/.test(text) ? undefined : text
  }
  return value
}

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

/** The canonical path a link file names (relative to the directory holding it), or undefined. */
const linkTarget = (base: string, link: string | undefined, fs: FsView) =>
  link ? fs.realpath(resolveFrom(base, link)) : undefined

/**
 * The common dir of a linked worktree whose gitdir (canonical) links back to `dotGit`; undefined for a
 * gitdir with no `commondir` (a submodule's, checked by its config instead).
 */
function linkedWorktree(ws: string, dotGit: string, gitdir: string, rules: PathRules, fs: FsView): string | undefined {
  const named = firstLine(fs.readText(`${gitdir}/commondir`))
  if (named === undefined) {
    if (fs.lstat(`${gitdir}/commondir`) !== undefined)
      refuse(ws, `gitdir ${gitdir} has a commondir that is not a one-line file`)
    return undefined
  }
  const common = gitDirectory(ws, resolveFrom(gitdir, named), "commondir", rules, fs)
  const hint = unlinkedHint(dotGit, gitdir, ws)
  // git keeps a linked worktree's gitdir at <common>/worktrees/<name>; a common dir anywhere else is
  // a pointer someone wrote, not a repository this gitdir belongs to.
  if (parentOf(gitdir) !== `${common}/worktrees`)
    refuse(
      ws,
      `gitdir ${gitdir} names the common dir ${common}, but is not one of its worktrees (${common}/worktrees/<name>)`,
      hint,
    )
  const back = linkTarget(gitdir, firstLine(fs.readText(`${gitdir}/gitdir`)), fs)
  if (back !== dotGit)
    refuse(
      ws,
      `gitdir ${gitdir} does not link back to this worktree (its gitdir file names ${back ?? "nothing"}, not ` +
        `${dotGit})`,
      hint,
    )
  // A repository whose work tree is HOME (a dotfiles repository) holds HOME's files, keys included.
  const tree = linkTarget(common, coreWorktree(fs.readText(`${common}/config`)), fs)
  if (tree && isInside(rules.home, tree)) {
    const whose = tree === rules.home ? "HOME" : tree
    refuse(
      ws,
      `common dir ${common} is the repository of ${whose} (its core.worktree), which holds HOME's files`,
      DOTFILES_HINT,
    )
  }
  return common
}

const DOTFILES_HINT = "Delegate in a clone of the files you mean to share, not in a worktree of your HOME's repository."

const commondirHint = (dotGit: string) =>
  `Delete ${dotGit}/commondir if you did not put it there (a delegated agent or an archive may have), or re-clone ` +
  `the repository; then retry.`

/**
 * Canonical paths to mount read-only, in mount order (the workspace's own `.git` entry first). Empty
 * when the workspace has no `.git`. Throws a Sandbox error naming the rule and the fix otherwise.
 */
export function gitMetadataPaths(workspace: string, rules: PathRules, fs: FsView): string[] {
  const dotGit = `${workspace}/.git`
  const kind = fs.lstat(dotGit)
  if (kind === undefined) return []
  if (kind === "dir") {
    // git reads objects, refs and config from a commondir: one in `.git` itself could name any repository.
    const only = "only a linked worktree's gitdir under <repository>/worktrees/<name> may"
    if (fs.lstat(`${dotGit}/commondir`) !== undefined)
      refuse(workspace, `directory ${dotGit} names a common dir (${dotGit}/commondir); ${only}`, commondirHint(dotGit))
    return [dotGit]
  }
  // A symlinked .git could send the read-only mount (or, on old bwrap, a mount point) anywhere.
  const what = kind === "other" ? "special file" : kind
  if (kind !== "file") refuse(workspace, `entry ${dotGit} is a ${what}, not a directory or a gitdir file`)
  const target = pointer(fs.readText(dotGit), "gitdir:")
  if (!target) refuse(workspace, `file ${dotGit} has no "gitdir:" line`)
  const gitdir = gitDirectory(workspace, resolveFrom(workspace, target), "gitdir", rules, fs)
  const common = linkedWorktree(workspace, dotGit, gitdir, rules, fs)
  if (common) return [...new Set([dotGit, gitdir, common])]
  const worktree = linkTarget(gitdir, coreWorktree(fs.readText(`${gitdir}/config`)), fs)
  if (worktree !== workspace)
    refuse(
      workspace,
      `file ${dotGit} names the gitdir ${gitdir}, which does not link back to this workspace: it has no ` +
        `commondir (not a linked worktree's) and its config's core.worktree is ${worktree ?? "not set"}, not ` +
        `${workspace}`,
      unlinkedHint(dotGit, gitdir, workspace),
    )
  return [dotGit, gitdir]
}
