// A worker's scope: the workspace-relative paths and simple globs it may change (util/glob.ts); an entry
// naming a directory (with or without a trailing `/`) covers everything under it. Pure: the
// settle-time diff (settle.ts) and patch collection (patch.ts) ask it which changed files fall outside.
import { fail } from "../errors"
import { globsMatcher } from "../util/glob"

const SCOPE_LIMITS = { maxEntries: 64, maxChars: 300 } as const

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f]/
const NEXT =
  `Pass at most ${SCOPE_LIMITS.maxEntries} workspace-relative paths or globs of at most ${SCOPE_LIMITS.maxChars} ` +
  `characters each, e.g. ["src/tally.ts", "src/**", "test/*.test.ts"]; omit scope to let the worker change anything.`

/** The scope as given, each entry checked and a leading `./` dropped; refuses with a next step. Pure. */
export function checkScope(scope: readonly string[] | undefined): string[] | undefined {
  if (scope === undefined) return undefined
  if (scope.length === 0) throw fail("Usage", "scope is empty: the worker could change nothing.", NEXT)
  if (scope.length > SCOPE_LIMITS.maxEntries)
    throw fail("Usage", `scope has ${scope.length} entries, over the limit of ${SCOPE_LIMITS.maxEntries}.`, NEXT)
  return scope.map((entry) => {
    const wrong = (why: string) => fail("Usage", `scope entry ${JSON.stringify(entry)} ${why}.`, NEXT)
    if (entry.length > SCOPE_LIMITS.maxChars)
      throw wrong(`has ${entry.length} characters, over the limit of ${SCOPE_LIMITS.maxChars}`)
    if (CONTROL.test(entry)) throw wrong("contains a control character")
    if (entry.startsWith("/")) throw wrong("is absolute; scope entries are relative to the workspace (cwd)")
    const path = entry.replace(/^(\.\/)+/, "")
    const segments = path.replace(/\/$/, "").split("/")
    if (!path || segments.some((segment) => segment === "")) throw wrong("has an empty path segment")
    if (segments.includes("..")) throw wrong("leaves the workspace with ..")
    if (segments.includes(".")) throw wrong("has a . segment")
    return path
  })
}

/**
 * The scope as OpenCode wildcards (its `*` matches any characters, `/` included), each covering at least
 * what the entry does, so a permission rule built from them never refuses a path inside the scope; what
 * they let through beyond it the settle-time check still names. Pure.
 */
export function scopeWildcards(scope: readonly string[]): string[] {
  const wide = scope.map((entry) =>
    entry
      .replace(/\/$/, "")
      .replace(/(^|\/)\*\*(\/|$)/g, "$1*")
      .replace(/\*+/g, "*"),
  )
  return [...new Set(wide.flatMap((pattern) => (pattern.endsWith("*") ? [pattern] : [pattern, `${pattern}/*`])))]
}

/**
 * The permission name of the rules that carry a session's scope entries as given (one rule each): the
 * edit rules hold only their wider OpenCode wildcards, and the plugin's sandbox_shell reads these from
 * the session to bind exactly the scope writable. No tool asks this permission, so the rules decide nothing.
 */
export const SCOPE_RULE = "orchestrator_scope"

/** The paths outside the scope, in the order given; every path when none may change. Pure. */
export function outOfScope(scope: readonly string[], paths: readonly string[]): string[] {
  const inScope = globsMatcher(scope)
  return paths.filter((path) => !inScope(path))
}
