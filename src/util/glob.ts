// The scope globs' matcher: `*` matches within one path segment, `?` one character of it, `**` any number
// of whole segments; everything else is literal. Below both its users: the workspace's scope check
// (workspace/scope.ts) and the sandbox, which expands a scope into its writable mounts (sandbox/scope-binds.ts).

/** One segment (not `**`) as a regular expression body: `*` and `?` stay within the segment. Pure. */
const segmentBody = (segment: string) =>
  [...segment].map((c) => (c === "*" ? "[^/]*" : c === "?" ? "[^/]" : c.replace(/[.+^${}()|[\]\\]/g, "\\$&"))).join("")

/** One segment (not `**`) as a matcher of one file name; the sandbox expands a scope with it. Pure. */
export const segmentMatcher = (segment: string): ((name: string) => boolean) => {
  const pattern = new RegExp(`^${segmentBody(segment)}$`, "s")
  return (name) => pattern.test(name)
}

/** True when a segment has a wildcard (`*`, `?`); everything else in it is literal. Pure. */
export const isWildcard = (segment: string) => /[*?]/.test(segment)

/** One glob as a regular expression over a whole relative path (the path or anything under it). Pure. */
export function globPattern(glob: string): RegExp {
  const segments = glob.replace(/\/$/, "").split("/")
  const parts = segments.map((segment, index) => {
    const last = index === segments.length - 1
    if (segment === "**") return last ? "(?:[^/]+(?:/[^/]+)*)" : "(?:[^/]+/)*"
    const body = segmentBody(segment)
    return last ? body : `${body}/`
  })
  return new RegExp(`^${parts.join("")}(?:/.*)?$`, "s")
}

/** Several globs as one matcher: true when a relative path matches any of them (a scope). Pure. */
export function globsMatcher(globs: readonly string[]): (path: string) => boolean {
  const patterns = globs.map(globPattern)
  return (path) => patterns.some((pattern) => pattern.test(path))
}
