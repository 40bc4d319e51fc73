// What changed on disk in a workspace since a moment, every file counted: tracked, untracked and ignored
// alike (git's status never lists ignored files, so a scoped worker's write to `.env` or `dist/` went
// unnamed). Found by the kernel's change time: every write, create, rename, chmod or link sets an
// inode's ctime to now, and no process can set it back, so "ctime at or after the turn began" is "changed
// during the turn", whoever did it. A file removed leaves no inode to ask; its directory's ctime changed,
// and a directory changed with nothing changed in it is named itself (`cache/`). One walk at the end,
// nothing stored at the start: the cost is one lstat per entry, in the read-only sandbox (`find` never
// follows a link), bounded in time and output; directories wholly in the scope are not descended.
import { fail } from "../../errors"
import { type HostContext, hostFs, planSandbox, runSandboxed } from "../../sandbox"
import { isWildcard } from "../../util/glob"

/** The walk's bounds: past either, what was found stands and the answer says it is incomplete. */
export const DISK_CHANGE_LIMITS: { timeoutMs: number; maxOutputBytes: number } = {
  timeoutMs: 60_000,
  maxOutputBytes: 4 * 1024 * 1024,
}

/**
 * Inode times come from the kernel's coarse clock, which lags the clock `Date.now()` reads by up to one
 * tick (10 ms at HZ=100): a change made just after `since` may carry a time just before it. So a turn
 * starts only this long after its `since` (clockPast), and the walk compares with `since` itself: a
 * change before the turn is never named, one during it always is.
 */
const CLOCK_TICK_MS = 20

/** Waits until every change made from now on carries a ctime after `sinceMs`; at most CLOCK_TICK_MS. */
export async function clockPast(sinceMs: number): Promise<void> {
  const wait = sinceMs + CLOCK_TICK_MS - Date.now()
  if (wait > 0) await Bun.sleep(wait)
}

export interface DiskChanges {
  /**
   * Workspace-relative paths changed since the moment; a directory (`name/`, `./` for the workspace) when
   * only its entries did.
   */
  paths: string[]
  /** Why the walk stopped before it saw everything; absent when it saw everything. */
  incomplete?: string
}

// Find's -path patterns are fnmatch patterns: a scope's literal name must not become one.
const literal = (path: string) => path.replace(/[*?[\]\\]/g, "\\$&")

/**
 * find -path patterns for what the scope covers wholly, so the walk skips it: an entry without
 * wildcards (the path and everything under it), and `dir/**` (everything under dir). Other entries are
 * filtered after the walk. Never wider than the scope: what is pruned is in it. Pure.
 */
export function scopePrunes(scope: readonly string[]): string[] {
  return scope.flatMap((entry) => {
    const segments = entry.replace(/\/$/, "").split("/")
    const fixed = (parts: string[]) => parts.every((part) => part !== "**" && !isWildcard(part))
    if (fixed(segments)) return [`./${literal(segments.join("/"))}`]
    if (segments.at(-1) === "**" && fixed(segments.slice(0, -1)))
      return [segments.length === 1 ? "./*" : `./${literal(segments.slice(0, -1).join("/"))}/*`]
    return []
  })
}

/**
 * The find expression: `.git` directories skipped, each changed entry printed, then what the scope covers
 * pruned. Pure.
 */
export function findArgs(sinceMs: number, prunes: readonly string[]): string[] {
  const seconds = (sinceMs / 1000).toFixed(3)
  const covered = prunes.flatMap((pattern, index) => [...(index ? ["-o"] : []), "-path", pattern])
  return [
    "find",
    ".",
    ...["-name", ".git", "-type", "d", "-prune", "-o"],
    ...["-newerct", `@${seconds}`, "-printf", "%y %P\\0", "-false"],
    ...(covered.length ? ["-o", "(", ...covered, ")", "-prune"] : []),
  ]
}

const parentOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "")

/**
 * find's `type path` records as changed paths: every changed non-directory, and every changed directory
 * none of whose entries is in the list (what changed in it is an entry removed or renamed away). Pure.
 */
export function changedPaths(output: string): string[] {
  const entries = output.split("\0").flatMap((record) => (record.length >= 2 ? [record] : []))
  const parsed = entries.map((record) => ({ kind: record[0], path: record.slice(2) }))
  const explained = new Set(parsed.filter((entry) => entry.path !== "").map((entry) => parentOf(entry.path)))
  const paths = parsed.flatMap(({ kind, path }) => {
    if (kind !== "d") return [path]
    if (explained.has(path)) return []
    return [path ? `${path}/` : "./"]
  })
  return [...new Set(paths)].sort()
}

/** The paths changed in `workspace` since `sinceMs` (ms since the epoch), skipping what `scope` covers wholly. */
export async function diskChangesSince(
  workspace: string,
  host: HostContext,
  options: { sinceMs: number; scope: readonly string[]; limits?: typeof DISK_CHANGE_LIMITS },
): Promise<DiskChanges> {
  const limits = options.limits ?? DISK_CHANGE_LIMITS
  const plan = planSandbox({ profile: { kind: "scout" }, workspace, host }, hostFs)
  const result = await runSandboxed(plan, findArgs(options.sinceMs, scopePrunes(options.scope)), limits)
  if (result.failure)
    throw fail("Sandbox", `The sandbox could not start: ${result.failure.detail}`, result.failure.hint)
  // Only whole records: a cut output ends inside one.
  const whole = result.truncated ? result.stdout.slice(0, result.stdout.lastIndexOf("\0") + 1) : result.stdout
  const paths = changedPaths(whole)
  if (result.timedOut) return { paths, incomplete: `the walk took over ${limits.timeoutMs / 1000}s and was stopped` }
  if (result.truncated) return { paths, incomplete: `more than ${limits.maxOutputBytes} bytes of changed paths` }
  // find exits 1 when it could not read a directory (one the task made unreadable): what it saw stands.
  if (result.exitCode !== 0)
    return { paths, incomplete: `find could not read everything: ${result.stderr.trim().slice(0, 300) || "exit 1"}` }
  return { paths }
}
