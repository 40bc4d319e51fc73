// The scope matcher (glob → which changed files fall outside) and the checks on a scope as given, as tables.
import { describe, expect, test } from "bun:test"
import { AppError } from "../../src/errors"
import { globsMatcher } from "../../src/util/glob"
import { checkScope, outOfScope, scopeWildcards } from "../../src/workspace/scope"

const MATCHES: Array<[string, string, boolean]> = [
  ["src/tally.ts", "src/tally.ts", true],
  ["src/tally.ts", "src/tally.tsx", false],
  ["src/tally.ts", "src/tally_ts", false],
  ["src/tally.ts", "lib/src/tally.ts", false],
  ["src", "src/a/b.ts", true],
  ["src/", "src/a.ts", true],
  ["src", "srcx/a.ts", false],
  ["src/**", "src/a.ts", true],
  ["src/**", "src/a/b/c.ts", true],
  ["src/**", "src", false],
  ["src/**", "test/a.ts", false],
  ["test/*.test.ts", "test/a.test.ts", true],
  ["test/*.test.ts", "test/sub/a.test.ts", false],
  ["test/*.test.ts", "test/a.ts", false],
  ["*.md", "README.md", true],
  ["*.md", "docs/README.md", false],
  ["**/*.md", "docs/deep/README.md", true],
  ["**/*.md", "README.md", true],
  ["src/**/index.ts", "src/index.ts", true],
  ["src/**/index.ts", "src/a/b/index.ts", true],
  ["src/**/index.ts", "src/a/b/index.tsx", false],
  ["a?.ts", "ab.ts", true],
  ["a?.ts", "a/.ts", false],
  ["**", "anything/at/all", true],
  // Regular-expression characters are literal.
  ["a+b(1).ts", "a+b(1).ts", true],
  ["a+b(1).ts", "aab1.ts", false],
  ["[ab].ts", "a.ts", false],
  ["[ab].ts", "[ab].ts", true],
  ["file\nname", "file\nname", true],
]

describe("globsMatcher on a scope", () => {
  for (const [entry, path, expected] of MATCHES)
    test(`${JSON.stringify(entry)} ${expected ? "covers" : "does not cover"} ${JSON.stringify(path)}`, () => {
      expect(globsMatcher([entry])(path)).toBe(expected)
    })

  test("outOfScope lists every path no entry covers, in order", () => {
    const paths = ["src/a.ts", "README.md", "test/a.test.ts", "test/x/b.test.ts", "NOTES.md"]
    expect(outOfScope(["src/**", "test/*.test.ts"], paths)).toEqual(["README.md", "test/x/b.test.ts", "NOTES.md"])
  })
})

// OpenCode 1.18's permission wildcard: `*` any characters (`/` included), `?` one, the rest literal.
const wildcard = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
    "s",
  )

describe("scopeWildcards", () => {
  // A session rule built from them must never refuse a path the scope covers.
  for (const [entry, path] of MATCHES.filter(([, , covered]) => covered))
    test(`${JSON.stringify(entry)}'s wildcards let ${JSON.stringify(path)} through`, () => {
      expect(scopeWildcards([entry]).some((pattern) => wildcard(pattern).test(path))).toBe(true)
    })

  test("they stay narrow where they can: another top-level file is not let through", () => {
    for (const entry of ["src/**", "src/tally.ts", "test/*.test.ts", "lib/"])
      expect(scopeWildcards([entry]).some((pattern) => wildcard(pattern).test("README.md"))).toBe(false)
  })
})

const REFUSED: Array<[string, unknown[], string]> = [
  ["empty", [], "scope is empty"],
  ["too many entries", Array.from({ length: 65 }, (_, i) => `f${i}`), "65 entries, over the limit of 64"],
  ["an entry too long", ["a".repeat(301)], "301 characters, over the limit of 300"],
  ["absolute", ["/etc/passwd"], "is absolute"],
  ["..", ["../outside"], "leaves the workspace"],
  ["a nested ..", ["src/../../x"], "leaves the workspace"],
  ["a newline", ["src\n/a"], "control character"],
  ["a NUL", ["a\u0000b"], "control character"],
  ["an empty entry", [""], "empty path segment"],
  ["a double slash", ["src//a"], "empty path segment"],
  ["only ./", ["./"], "empty path segment"],
  ["a . segment", ["src/./a"], ". segment"],
]

describe("checkScope", () => {
  for (const [name, scope, message] of REFUSED)
    test(`refuses ${name}, with a next step`, () => {
      let thrown: unknown
      try {
        checkScope(scope as string[])
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(AppError)
      expect((thrown as AppError).message).toContain(message)
      expect((thrown as AppError).hint).toContain("workspace-relative")
    })

  test("accepts up to the bounds, drops a leading ./, and passes undefined through", () => {
    expect(checkScope(undefined)).toBeUndefined()
    expect(checkScope(["./src/a.ts", "src/", "test/*.test.ts"])).toEqual(["src/a.ts", "src/", "test/*.test.ts"])
    expect(checkScope(Array.from({ length: 64 }, () => "a".repeat(300)))).toHaveLength(64)
  })
})
