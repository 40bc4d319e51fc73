// Files that other programs run, or that an agent reads as instructions, on their own: one list
// (autorun.json, each entry with its reason and the anchors it comes from) decided here, for the
// plugin's file tools (which refuse writing them), the engine's scan (src/workspace/snapshot/autorun.ts, which
// flags what a sandboxed command did to them) and patch_apply (which refuses them without
// allow_autorun). Entries name files, and kinds: path patterns that catch a tool's rules, commands
// and MCP lists whatever the tool is called. Pure.
import list from "./autorun.json"
import { contentFingerprint, type ContentRule } from "./autorun-content"
import type { FsView } from "./fs-view"
import { repositoryPrefixes } from "./roots"

interface Entry {
  match: string
  why: string
  /** The program that reads it (the result's `known:<tool>`); the kind's name when absent. */
  tool?: string
  from?: string[]
  content?: ContentRule
}
interface Kind {
  title: string
  why: string
  entries: Entry[]
}
export interface AutorunList {
  anchors: Record<string, string>
  /** Kinds considered and left off, each with the reason. */
  not: Record<string, string>
  skip: { segments: string[]; why: string }
  kinds: Record<string, Kind>
}

/** The list as data (its `$comment` says how an entry matches). */
export const AUTORUN_LIST = list as unknown as AutorunList

/** What a path is, when it is (or is inside) an autorun entry. */
export interface AutorunHit {
  /** The entry's own path, relative to the workspace: the path itself or the ancestor that matched. */
  path: string
  kind: string
  /** The kind in a few words: "a CI system's config". */
  title: string
  why: string
  /** The entry's own reason: "GitLab CI". */
  detail: string
  /** The program that reads it ("just", "rustup"), or the kind's name when the entry names none. */
  tool: string
  /** Only what this rule extracts from the file counts (an ordinary edit passes). */
  content?: ContentRule
}

interface Compiled {
  segments: RegExp[]
  kind: string
  entry: Entry
}

const globSegment = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
    "is",
  )

let compiled: Compiled[] | undefined
function rules(): Compiled[] {
  compiled ??= Object.entries(AUTORUN_LIST.kinds).flatMap(([kind, { entries }]) =>
    entries.map((entry) => ({ segments: entry.match.split("/").map(globSegment), kind, entry })),
  )
  return compiled
}

const skipped = (part: string) => AUTORUN_LIST.skip.segments.includes(part.toLowerCase())

/**
 * The outermost autorun entry a workspace-relative path is or lies inside, or undefined. A content
 * entry matches its file only; whether the file's content makes it autorun is `autorunContent`'s.
 */
export function autorunHit(relative: string): AutorunHit | undefined {
  const parts = relative.split("/").filter((part) => part && part !== ".")
  let best: { end: number; rule: Compiled } | undefined
  for (const rule of rules()) {
    const size = rule.segments.length
    for (let start = 0; start + size <= parts.length; start++) {
      if (skipped(parts[start]!)) break
      const end = start + size
      if (best && end >= best.end) break
      if (rule.entry.content && end !== parts.length) continue
      const matched = parts.slice(start, end)
      if (!matched.some(skipped) && rule.segments.every((segment, index) => segment.test(matched[index]!)))
        best = { end, rule }
    }
  }
  if (!best) return undefined
  const { kind, entry } = best.rule
  const { title, why } = AUTORUN_LIST.kinds[kind]!
  return {
    path: parts.slice(0, best.end).join("/"),
    kind,
    title,
    why,
    detail: entry.why,
    tool: entry.tool ?? kind,
    ...(entry.content ? { content: entry.content } : {}),
  }
}

/**
 * Where `workspace` lies inside the nearest repository that holds it ("" at its root, or outside any):
 * a worker whose workspace is `.github/workflows` or `.claude` writes autorun files under plain names.
 * Decisions take every enclosing repository (`repositoryPrefixes`): the nearest `.git` may be planted.
 */
export const repositoryPrefix = (workspace: string, fs: FsView) => repositoryPrefixes(workspace, fs)[0]!

/**
 * `autorunHit` for a path relative to a workspace at `prefix` in its repository (or at each of several,
 * nearest first: the first hit); the hit's path stays workspace-relative.
 */
export function autorunHitIn(prefix: string | readonly string[], relative: string): AutorunHit | undefined {
  if (typeof prefix !== "string") {
    for (const each of prefix) {
      const hit = autorunHitIn(each, relative)
      if (hit) return hit
    }
    return undefined
  }
  if (!prefix) return autorunHit(relative)
  const hit = autorunHit(`${prefix}/${relative}`)
  if (!hit) return undefined
  // The workspace itself inside an entry: every path in it is that entry.
  const inside = hit.path.length > prefix.length ? hit.path.slice(prefix.length + 1) : relative
  return { ...hit, path: inside }
}

/**
 * The entry that would lie below `relative` if it were a directory: a path that is a proper prefix of
 * an entry's match (`.vscode` of `.vscode/tasks.json`, `.cargo` of `.cargo/config.toml`). A symlink
 * there makes its target's files that entry's. Undefined when no entry continues through it.
 */
export function autorunBelow(prefix: string | readonly string[], relative: string): AutorunHit | undefined {
  for (const each of typeof prefix === "string" ? [prefix] : prefix) {
    const parts = `${each ? `${each}/` : ""}${relative}`.split("/").filter((part) => part && part !== ".")
    for (const rule of rules())
      for (let start = 0; start < parts.length; start++) {
        if (skipped(parts[start]!)) break
        const size = parts.length - start
        if (
          size >= rule.segments.length ||
          !rule.segments.slice(0, size).every((segment, index) => segment.test(parts[start + index]!))
        )
          continue
        const { title, why } = AUTORUN_LIST.kinds[rule.kind]!
        const detail = `${rule.entry.why}, as ${rule.entry.match}`
        return { path: relative, kind: rule.kind, title, why, detail, tool: rule.entry.tool ?? rule.kind }
      }
  }
  return undefined
}

/** True when writing `relative` by name alone is writing an autorun file (content entries excluded). */
export function isAutorunPath(relative: string): boolean {
  const hit = autorunHit(relative)
  return hit !== undefined && hit.content === undefined
}

/**
 * The autorun hit for a write that takes `relative` from `before` to `after` (undefined: absent), or
 * undefined when the write is ordinary: the path is no entry, or it is a content entry whose
 * extracted part (lifecycle scripts and the like) is the same before and after.
 */
export function autorunWrite(
  relative: string,
  before: string | undefined,
  after: string | undefined,
  prefix: string | readonly string[] = "",
): AutorunHit | undefined {
  const hit = autorunHitIn(prefix, relative)
  if (!hit?.content) return hit
  return contentFingerprint(hit.content, before) === contentFingerprint(hit.content, after) ? undefined : hit
}

/** One line naming what a path is and why it matters, for refusals and warnings. */
export const describeHit = (hit: AutorunHit) => `${hit.path} is ${hit.title} (${hit.detail}). ${hit.why}`

/**
 * The last segment of every entry's pattern, as `find -iname` globs: a superset of the autorun
 * entries under a directory, which `autorunHit` then decides exactly. `prune` are single literal names
 * whose whole subtree is the entry, so nothing below them needs listing.
 */
export function findNames(): { names: string[]; prune: string[]; skip: string[] } {
  const names = new Set<string>()
  const prune = new Set<string>()
  for (const { entry } of rules()) {
    const last = entry.match.split("/").at(-1)!
    names.add(last)
    if (!entry.match.includes("/") && !/[*?]/.test(last) && !entry.content) prune.add(last)
  }
  return { names: [...names].filter((name) => !prune.has(name)), prune: [...prune], skip: AUTORUN_LIST.skip.segments }
}

export { contentFingerprint, type ContentRule }
