// Files that other programs run, or agents read as instructions, on their own (src/sandbox/autorun.json:
// Git metadata and hooks, agent instructions and config, MCP server lists, editor tasks, CI, hook
// managers, install-time scripts, policy markers). A delegated writer may not create, change or delete
// them: the host-side file tools refuse them, and whatever the sandbox shell did to them is found here
// (with `find`, so no repository program runs, then decided by the one classifier) and ends the task
// needs_review.
import { lstat, readdir, readlink, realpath, stat } from "node:fs/promises"
import {
  autorunBelow,
  autorunHit,
  autorunHitIn,
  contentFingerprint,
  findNames,
  hostFs,
  repositoryPrefixes,
  ruleByPath,
  ruleOf,
  type AutorunHit,
  type AutorunRule,
} from "../../sandbox"
import { run } from "../../util/process"
import { fingerprint } from "./changes"

/** Entries read of one directory entry: enough to see a planted file, bounded for a huge tree. */
const DIR_ENTRIES = 2000

const expression = (names: string[]) => [
  "(",
  ...names.flatMap((name, index) => [...(index ? ["-o"] : []), "-iname", name]),
  ")",
]

/** Files the rules look at, each one key; past this the largest groups become one key each (`<group>/**`). */
const MAX_RULE_KEYS = 1500

/**
 * Every autorun entry under the workspace, relative to it, with a fingerprint of what would run: an
 * entry that is a directory is one key for itself and one per file inside (so a change names the
 * file), a content entry (package.json) is a key only when something in it runs. The workspace's own
 * `.git` counts too: the sandbox mounts it read-only when it exists, but a worker in a directory
 * without one can create it. Beside the named entries, every file a rule looks at (autorun-rules.ts:
 * hidden at any depth, at the root and not source, executable) with its metadata; `previous` (the
 * scan before the turn) has each of its rule files looked at again, so one made non-executable reads
 * as a mode change, not as gone.
 */
export async function autorunFiles(
  workspace: string,
  previous?: Record<string, string>,
): Promise<Record<string, string>> {
  const named = await namedFiles(workspace)
  return { ...(await ruleFiles(workspace, named, previous)), ...named }
}

async function namedFiles(workspace: string): Promise<Record<string, string>> {
  const prefix = repositoryPrefixes(workspace, hostFs)
  // A workspace inside an entry (.github/workflows, .claude) of any repository holding it: each file in it is that
  // entry.
  if (prefix.some((each) => each && autorunHit(each))) return { ".": "directory", ...(await filesOf(workspace, "")) }
  const { names, prune, skip } = findNames()
  const found = await run(
    [
      "find",
      workspace,
      "-mindepth",
      "1",
      ...expression(skip),
      "-prune",
      "-o",
      ...expression(prune),
      "-print",
      "-prune",
      "-o",
      ...expression(names),
      "-print",
    ],
    {
      timeoutMs: 30_000,
    },
  )
  const roots = new Map<string, AutorunHit>()
  for (const path of found.stdout.split("\n").filter(Boolean)) {
    const relative = path.slice(workspace.length + 1)
    const hit = autorunHitIn(prefix, relative)
    if (hit && hit.path === relative) roots.set(relative, hit)
  }
  const entries: Record<string, string> = {}
  for (const relative of [...roots.keys()].sort()) {
    // An entry inside another (.github/workflows inside a flagged .github/...) is already listed by it.
    if ([...roots.keys()].some((other) => relative.startsWith(`${other}/`))) continue
    const hit = roots.get(relative)!
    const path = `${workspace}/${relative}`
    if (hit.content) {
      const text = await readManifest(path)
      const part = text === undefined ? undefined : contentFingerprint(hit.content, text)
      if (part) entries[relative] = part
      continue
    }
    const own = await fingerprint(path)
    entries[relative] = own.startsWith("other:") ? "directory" : own
    if (!own.startsWith("other:")) continue
    Object.assign(entries, await filesOf(path, `${relative}/`))
  }
  // What a link in an entry reaches inside the workspace runs as that entry: `ci/` behind `.github/workflows -> ../ci`;
  // and what a link above one reaches, as far as it is one: `editor/tasks.json` behind `.vscode -> editor`.
  for (const { link, target, entry } of await autorunLinks(workspace, prefix)) {
    const reached = `${await realpath(workspace).catch(() => workspace)}/${target}` // as autorunLinks resolved it
    const info = await stat(reached).catch(() => undefined) // gone since the listing: the link's own key says so
    // A link above an entry counts itself only when it leads to a directory: `.eslintrc.json -> ../x` has nothing
    // below.
    if (!entry && info?.isDirectory()) entries[link] ??= await fingerprint(`${workspace}/${link}`)
    if (info?.isDirectory())
      for (const [key, value] of Object.entries(await filesOf(reached, `${link}/`)))
        if (entry || autorunHitIn(prefix, key)) entries[key] = value
    if (info?.isFile() && entry)
      entries[link] = `${entries[link] ?? (await fingerprint(`${workspace}/${link}`))} ${await fingerprint(reached)}`
  }
  return entries
}

/**
 * A symlink that is (or is inside) an autorun entry, or has one below it, and what it resolves to inside the workspace.
 */
export interface AutorunLink {
  link: string
  target: string
  /** The link is or lies inside an entry (everything it reaches is that entry); false: an entry lies below it. */
  entry: boolean
}

/**
 * Every symlink that is or lies inside an autorun entry, or that an entry continues through
 * (`.vscode`, `.cargo`), and resolves inside the workspace, both relative to it (`prefix`: the
 * workspace in its repository). A link out of the workspace reaches nothing a worker can write.
 */
export async function autorunLinks(
  workspace: string,
  prefix: string | readonly string[] = repositoryPrefixes(workspace, hostFs),
): Promise<AutorunLink[]> {
  const { skip } = findNames()
  const found = await run(
    ["find", workspace, "-mindepth", "1", ...expression(skip), "-prune", "-o", "-type", "l", "-print"],
    { timeoutMs: 30_000 },
  )
  const root = await realpath(workspace).catch(() => workspace) // gone: no link resolves inside it
  const links: AutorunLink[] = []
  for (const path of found.stdout.split("\n").filter(Boolean)) {
    const link = path.slice(workspace.length + 1)
    const entry = autorunHitIn(prefix, link) !== undefined
    if (!entry && !autorunBelow(prefix, link)) continue
    const real = await realpath(path).catch(() => undefined) // dangling: nothing to reach
    if (real?.startsWith(`${root}/`)) links.push({ link, target: real.slice(root.length + 1), entry })
  }
  return links
}

/** Each file a directory entry holds, keyed `${key}<name>`, with its fingerprint. */
async function filesOf(path: string, key: string): Promise<Record<string, string>> {
  const entries: Record<string, string> = {}
  for (const inside of await insideOf(path)) entries[`${key}${inside}`] = await fingerprint(`${path}/${inside}`)
  return entries
}

async function readManifest(path: string): Promise<string | undefined> {
  const own = await fingerprint(path)
  if (own === "absent" || own.startsWith("link:") || own.startsWith("other:")) return own === "absent" ? undefined : own
  // Too large to hash (its size and mtime stand in), or gone or unreadable since: the fingerprint is its content.
  if (own.startsWith("size:")) return own
  return (
    Bun.file(path)
      .text()
      // As above: unreadable, its fingerprint stands in for its content.
      .catch(() => own)
  )
}

/** What runs inside a directory entry: a Git directory's config and hooks (its objects are data), else every file. */
async function insideOf(path: string): Promise<string[]> {
  if (path.endsWith("/.git"))
    return [
      "config",
      // No hooks directory: only the config runs.
      ...(await readdir(`${path}/hooks`).catch(() => [] as string[])).map((hook) => `hooks/${hook}`),
    ].sort()
  // Walked by hand: a recursive readdir follows a symlinked directory, and a planted `x -> /` must not walk the disk.
  const files: string[] = []
  const pending = [""]
  while (pending.length && files.length < DIR_ENTRIES) {
    const dir = pending.shift()!
    // unreadable: its files are not listed, the directory's own key still is
    const entries = await readdir(dir ? `${path}/${dir}` : path, { withFileTypes: true }).catch(() => [])
    for (const entry of entries) (entry.isDirectory() ? pending : files).push(dir ? `${dir}/${entry.name}` : entry.name)
  }
  return files.sort().slice(0, DIR_ENTRIES)
}

/** A glob that matches `text` literally, for find's -path. */
const literalGlob = (text: string) => text.replace(/[\\*?[\]]/g, "\\$&")

/**
 * The files the rules look at (hidden at any depth, at the root, executable), named entries left to
 * `namedFiles`, each keyed by its path with `meta:<type>:<mode>:<size>:<ctime>:<inode>[:<link target>]`.
 * Metadata, not content: a sandboxed process can set a file's mtime but not its ctime, so any write,
 * chmod or replacement shows.
 */
async function ruleFiles(
  workspace: string,
  named: Record<string, string>,
  previous: Record<string, string> = {},
): Promise<Record<string, string>> {
  const base = literalGlob(workspace)
  const { skip } = findNames()
  const found = await run(
    [
      "find",
      workspace,
      "-mindepth",
      "1",
      ...expression([...skip, ".git"]),
      "-prune",
      "-o",
      "(",
      "-type",
      "f",
      "-o",
      "-type",
      "l",
      ")",
      "(",
      "-path",
      `${base}/.*`,
      "-o",
      "-path",
      `${base}/*/.*`,
      "-o",
      "-perm",
      "/111",
      "-o",
      "!",
      "-path",
      `${base}/*/*`,
      ")",
      "-printf",
      "%y:%m:%s:%C@:%i %P\\0%l\\0",
    ],
    { timeoutMs: 30_000 },
  )
  const prefix = repositoryPrefixes(workspace, hostFs)
  const fields = found.stdout.split("\0")
  const files: Record<string, string> = {}
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const line = fields[index]!
    const space = line.indexOf(" ")
    const [type, ...meta] = line.slice(0, space).split(":")
    const path = line.slice(space + 1)
    // A named entry, or a file inside one, is fingerprinted by content in `namedFiles`; a root-level
    // source file that is not executable is found by the root test but caught by no rule. A link's own
    // mode is always 777 (find's -perm matches every one), so a link counts by its path alone: what it
    // reaches is scanned as itself, and as an entry by `autorunLinks` when it reaches one.
    if (!path || path in named || autorunHitIn(prefix, path)) continue
    const executable = type !== "l" && (Number.parseInt(meta[0] ?? "", 8) & 0o111) !== 0
    if (!ruleByPath(path, prefix) && !executable) continue
    files[path] =
      `meta:${type === "l" ? "link" : "file"}:${meta.join(":")}${type === "l" ? `:${fields[index + 1]}` : ""}`
  }
  // Still there but no longer found (made non-executable): its metadata now, so the mode shows.
  for (const [path, was] of Object.entries(previous))
    if (was.startsWith("meta:") && !(path in files) && !path.endsWith("/**")) {
      const now = await metaOf(`${workspace}/${path}`)
      if (now) files[path] = now
    }
  return bounded(files)
}

/** One file's metadata as ruleFiles writes it, or undefined when it is gone. */
async function metaOf(path: string): Promise<string | undefined> {
  const info = await lstat(path).catch(() => undefined) // gone: read as removed
  if (!info) return undefined
  const mode = (info.mode & 0o7777).toString(8)
  if (info.isSymbolicLink()) {
    const target = await readlink(path).catch(() => "?") // gone since the lstat: still differs from any target
    return `meta:link:${mode}:${info.size}:${info.ctimeMs}:${info.ino}:${target}`
  }
  return `meta:${info.isFile() ? "file" : "other"}:${mode}:${info.size}:${info.ctimeMs}:${info.ino}`
}

/** The group a rule file is folded into past MAX_RULE_KEYS: its first hidden directory, else its top directory. */
function groupOf(path: string): string | undefined {
  const parts = path.split("/")
  const hidden = parts.findIndex((part) => part.startsWith("."))
  const end = hidden >= 0 && hidden < parts.length - 1 ? hidden + 1 : parts.length > 1 ? 1 : 0
  return end ? parts.slice(0, end).join("/") : undefined
}

/** The rule files, the largest groups folded into one key each (`<group>/**`) until they fit. */
function bounded(files: Record<string, string>): Record<string, string> {
  const out = { ...files }
  while (Object.keys(out).length > MAX_RULE_KEYS) {
    const groups = new Map<string, string[]>()
    for (const path of Object.keys(out)) {
      const group = path.endsWith("/**") ? undefined : groupOf(path)
      if (group) groups.set(group, [...(groups.get(group) ?? []), path])
    }
    const largest = [...groups.entries()].sort((a, b) => b[1].length - a[1].length)[0]
    if (!largest || largest[1].length < 2) break // only root files left: each stays its own key
    const [group, paths] = largest
    const lines = paths.sort().map((path) => `${path} ${out[path]}`)
    for (const path of paths) delete out[path]
    out[`${group}/**`] = `meta:group:${paths.length}:${Bun.hash(lines.join("\n")).toString(16)}`
  }
  return out
}

/** One autorun file a turn created, changed or removed, and the rule it matched. */
export interface AutorunFlag {
  path: string
  change: "new" | "changed" | "removed"
  rule: AutorunRule
}

/**
 * Autorun files that are new, changed or gone since `before`, each with what happened to it and the
 * rule it matched (`prefix`: the workspace in its repositories). A file inside a directory entry that
 * is itself new or gone is not listed again.
 */
export function autorunFlags(
  before: Record<string, string>,
  after: Record<string, string>,
  prefix: string | readonly string[] = "",
): AutorunFlag[] {
  const paths = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()
  const state = (path: string) => (!(path in before) ? "new" : path in after ? "changed" : "removed")
  const changed = paths.filter((path) => before[path] !== after[path])
  const wholesale = changed.filter((path) => state(path) !== "changed")
  return changed
    .filter((path) => !wholesale.some((root) => path.startsWith(`${root}/`)))
    .map((path) => ({ path, change: state(path), rule: ruleOf(path, prefix, before[path], after[path]) }))
}

/** autorunFlags as `path (change)` lines, for callers that only name them. */
export const autorunChanges = (before: Record<string, string>, after: Record<string, string>): string[] =>
  autorunFlags(before, after).map(({ path, change }) => `${path} (${change})`)

/** How many flagged files a result names; the rest are counted. */
export const MAX_FLAGS_NAMED = 20

export const autorunWarning = (changed: string[]) =>
  `Files that other programs run on their own appeared or changed in the workspace: ${changed.join(", ")}. Git ` +
  `hooks and config, agent instructions (AGENTS.md, CLAUDE.md and the like, which your own agents read next ` +
  `session), assistant and MCP config, CI, Git hook managers, install-time scripts and policy markers act ` +
  `outside any sandbox; inspect them (and restore what the task changed) before using git, an agent, a package ` +
  `manager or your editor there.`
