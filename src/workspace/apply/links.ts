// Which symlinks a patch may write without the caller's say-so: a link whose target stays inside the
// repository, resolved the way the kernel would (a `..` after a link leaves that link's target, not
// the link's directory), never into Git metadata, and never in place of a file or a directory the
// user had. Everything else is named with its target and written only with `allow_links: true`.
import { blobId } from "../git-objects"
import type { PatchFile } from "../patches"

/** What is at a repository-relative path right now, not following it. */
export type EntryAt = (rel: string) => { kind: "file" | "dir" | "link" | "other"; target?: string } | undefined

export interface LinkFinding {
  path: string
  target: string
  why: string
}

/** Links resolved per target, at most: a cycle or a long chain is refused, not followed. */
const MAX_LINKS = 40

const TOO_MANY = "it resolves through too many links"

const isLink = (mode?: string) => mode === "120000"

/**
 * The patch's links that need `allow_links`, each with why. `base` is the workspace relative to the
 * repository root ("" at the root); `now` answers for the tree as it is. Pure apart from `now`.
 */
export function riskyLinks(files: PatchFile[], base: string, now: EntryAt): LinkFinding[] {
  const rel = (path: string) => (base ? `${base}/${path}` : path)
  // The tree once the patch is applied, where the patch decides: its links, and what it removes or makes a file.
  const after = new Map<string, string | undefined>()
  for (const file of files) {
    if (file.oldPath) after.set(rel(file.oldPath), undefined)
    after.set(rel(file.path), isLink(file.newMode) ? (file.linkTarget ?? "") : undefined)
  }
  const linkAt = (path: string) =>
    after.has(path) ? after.get(path) : now(path)?.kind === "link" ? (now(path)?.target ?? "") : undefined

  const findings: LinkFinding[] = []
  for (const file of files.filter((f) => isLink(f.newMode))) {
    const target = file.linkTarget
    const found = (why: string) => findings.push({ path: file.path, target: target ?? "?", why })
    if (target === undefined || blobId(target) !== file.newOid) {
      found("its target was not recorded")
      continue
    }
    const was = now(rel(file.oldPath ?? file.path))
    if (file.oldMode && !isLink(file.oldMode)) found("it turns a file into a link")
    else if (!file.oldMode && was?.kind === "dir") found("it replaces a directory")
    else if (!file.oldMode && was?.kind === "file") found("it replaces a file")
    const parts = rel(file.path).split("/").slice(0, -1)
    const outcome = resolve(target, parts, linkAt, { left: MAX_LINKS })
    if (typeof outcome === "string") found(outcome)
  }
  return findings
}

/** Where `target`, read in directory `dir`, ends up (path components from the root), or why it leaves. */
function resolve(
  target: string,
  dir: string[],
  linkAt: (path: string) => string | undefined,
  budget: { left: number },
): string[] | string {
  if (target === "") return "its target is empty"
  if (target.startsWith("/")) return "it points to an absolute path"
  let stack = [...dir]
  // The last link followed: a `..` after it climbs from that link's target, which is what the reader needs to see.
  let via: string | undefined
  const leaves = (why: string) => `${why}${via ? ` (through the link ${via})` : ""}`
  for (const part of target.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      if (!stack.length) return leaves("it points outside the repository")
      stack.pop()
      continue
    }
    if (part.toLowerCase() === ".git") return leaves("it points into Git metadata")
    stack.push(part)
    const next = linkAt(stack.join("/"))
    if (next === undefined) continue
    if (--budget.left < 0) return TOO_MANY
    via = stack.join("/")
    stack.pop()
    const outcome = resolve(next, stack, linkAt, budget)
    // The innermost link that led out is named once; a cycle is named as one.
    if (typeof outcome === "string")
      return outcome.includes("(through the link") || outcome === TOO_MANY ? outcome : leaves(outcome)
    stack = outcome
  }
  return stack
}
