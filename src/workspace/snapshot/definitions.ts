// What counts as a check's definition: the files that decide what a verification command does and
// what it tests (build files, package scripts, tests and their configs, CI scripts), as data, each entry
// naming the tool that reads it. A worker graded by `verify` could otherwise edit the check until it
// passes; the verification restores these from the task's start (engine/outcome/verify.ts, frozen.ts) and the
// result names every one the worker changed. Matching is on workspace-relative paths, by the file's
// name or a folder on its path: a name nobody listed is caught by the folder (`test/`) or by the
// parent's `verify_frozen` globs. Pure.
import { fail } from "../../errors"

type Rule =
  /** The file's name, exactly. */
  | { name: string; readBy: string }
  /** The file's name ends with this (an extension or a suffix such as `.test.ts`'s `.test.`, see infix). */
  | { suffix: string; readBy: string }
  /** The file's name starts with this. */
  | { prefix: string; readBy: string }
  /** The file's name contains this, not at its start (`a.test.ts`, `a_test.go`). */
  | { infix: string; readBy: string }
  /** Any folder on the path has this name. */
  | { folder: string; readBy: string }
  /** The path lies under this folder, from the workspace's root. */
  | { under: string; readBy: string }

export const DEFINITION_RULES: readonly Rule[] = [
  // Build files: the targets a `make test` runs are written here.
  { name: "Makefile", readBy: "make" },
  { name: "makefile", readBy: "make" },
  { name: "GNUmakefile", readBy: "GNU make" },
  { suffix: ".mk", readBy: "make (included makefiles)" },
  { name: "justfile", readBy: "just" },
  { name: "Justfile", readBy: "just" },
  { name: "Taskfile.yml", readBy: "task (go-task)" },
  { name: "Taskfile.yaml", readBy: "task (go-task)" },
  { name: "CMakeLists.txt", readBy: "cmake, ctest" },
  { name: "meson.build", readBy: "meson test" },
  { name: "Rakefile", readBy: "rake" },
  { name: "build.gradle", readBy: "gradle test" },
  { name: "build.gradle.kts", readBy: "gradle test" },
  { name: "pom.xml", readBy: "mvn test" },
  // Package scripts and manifests: `npm test`, `bun run test`, `cargo test`, `go test` read them.
  { name: "package.json", readBy: "npm, yarn, pnpm, bun (scripts)" },
  { name: "deno.json", readBy: "deno task, deno test" },
  { name: "deno.jsonc", readBy: "deno task, deno test" },
  { name: "Cargo.toml", readBy: "cargo test" },
  { name: "build.rs", readBy: "cargo (build script run before tests)" },
  { name: "go.mod", readBy: "go test (module, replace directives)" },
  { name: "setup.py", readBy: "python setup.py test, pip" },
  // Test runners' configs: which files run, what is skipped, what setup runs first.
  { name: "pyproject.toml", readBy: "pytest, tox, hatch, poetry ([tool.*] sections)" },
  { name: "setup.cfg", readBy: "pytest, flake8 ([tool:pytest] section)" },
  { name: "pytest.ini", readBy: "pytest" },
  { name: "tox.ini", readBy: "tox, pytest" },
  { name: "noxfile.py", readBy: "nox" },
  { name: "conftest.py", readBy: "pytest (plugins and fixtures, loaded before every test)" },
  { name: "bunfig.toml", readBy: "bun test (preload, test root)" },
  { prefix: "tsconfig", readBy: "tsc, bun, ts-jest, vitest (tsconfig*.json)" },
  { prefix: "jest.config.", readBy: "jest" },
  { prefix: "vitest.config.", readBy: "vitest" },
  { prefix: "vitest.workspace.", readBy: "vitest" },
  { prefix: "vite.config.", readBy: "vitest (the test section)" },
  { prefix: ".mocharc", readBy: "mocha" },
  { prefix: "playwright.config.", readBy: "playwright test" },
  { prefix: "cypress.config.", readBy: "cypress" },
  { prefix: "karma.conf.", readBy: "karma" },
  { prefix: "babel.config.", readBy: "babel-jest (transforms every test)" },
  { name: ".babelrc", readBy: "babel-jest" },
  { name: ".rspec", readBy: "rspec" },
  // Test files by name: what a runner collects.
  { infix: ".test.", readBy: "jest, vitest, bun test, deno test" },
  { infix: ".spec.", readBy: "jest, vitest, mocha, jasmine" },
  { infix: "_test.", readBy: "go test, pytest, bun test" },
  { infix: "_spec.", readBy: "rspec" },
  { prefix: "test_", readBy: "pytest, unittest (test_*.py)" },
  // Test folders: every file in them (fixtures, helpers, expected outputs) feeds the tests.
  { folder: "test", readBy: "most runners (tests, fixtures, helpers)" },
  { folder: "tests", readBy: "most runners (tests, fixtures, helpers)" },
  { folder: "__tests__", readBy: "jest" },
  { folder: "spec", readBy: "rspec, jasmine" },
  { folder: "testdata", readBy: "go test (fixtures and golden files)" },
  // CI scripts: a verify command often runs what CI runs.
  { under: ".github/workflows/", readBy: "GitHub Actions (and commands copied from it)" },
  { name: ".gitlab-ci.yml", readBy: "GitLab CI" },
  { under: ".circleci/", readBy: "CircleCI" },
]

/** The parent's `verify_frozen`: at most this many globs, each at most this long. */
export const FROZEN_GLOB_LIMITS = { count: 32, chars: 256 } as const

function matches(rule: Rule, path: string, name: string, folders: readonly string[]): boolean {
  if ("name" in rule) return name === rule.name
  if ("suffix" in rule) return name.endsWith(rule.suffix)
  if ("prefix" in rule) return name.startsWith(rule.prefix)
  if ("infix" in rule) return name.indexOf(rule.infix) > 0
  if ("folder" in rule) return folders.includes(rule.folder)
  return path.startsWith(rule.under)
}

export interface DefinitionSelection {
  /** The verification command: a file it names (`bash scripts/check.sh`) is part of the check too. */
  command: string
  /** The parent's `verify_frozen` globs, checked by checkFrozenGlobs. */
  globs?: readonly string[]
}

/** A matcher for workspace-relative paths: true when the path is part of the check's definition. */
export function definitionMatcher(selection: DefinitionSelection): (path: string) => boolean {
  const globs = (selection.globs ?? []).map((glob) => new Bun.Glob(glob))
  return (path) => {
    const parts = path.split("/")
    const name = parts.at(-1) ?? path
    const folders = parts.slice(0, -1)
    if (DEFINITION_RULES.some((rule) => matches(rule, path, name, folders))) return true
    if (globs.some((glob) => glob.match(path))) return true
    return namesPath(selection.command, path)
  }
}

/** Refuses `verify_frozen` entries the product will not use, saying why; undefined passes. Pure. */
export function checkFrozenGlobs(globs: readonly string[] | undefined): void {
  if (globs === undefined) return
  const next = 'Pass workspace-relative paths or globs, e.g. ["scripts/check.sh", "fixtures/**"].'
  if (globs.length > FROZEN_GLOB_LIMITS.count)
    throw fail(
      "Usage",
      `verify_frozen has ${globs.length} entries, over the limit of ${FROZEN_GLOB_LIMITS.count}.`,
      next,
    )
  for (const glob of globs) {
    const why = !glob.trim()
      ? "is empty"
      : glob.length > FROZEN_GLOB_LIMITS.chars
        ? `is longer than ${FROZEN_GLOB_LIMITS.chars} characters`
        : glob.startsWith("/")
          ? "is absolute"
          : glob.split("/").includes("..")
            ? "climbs out of the workspace"
            : undefined
    if (why) throw fail("Usage", `The verify_frozen entry ${JSON.stringify(glob.slice(0, 80))} ${why}.`, next)
  }
}

/**
 * Programs that only look at the files they are given: a file named as their operand (`grep -q fixed
 * src/a.ts`) is the work being checked, not the check, and stays as the worker left it. Any other program's
 * operand (`bash scripts/check.sh`, `bun test a.test.ts`, `diff golden.txt out.txt`) is part of the check.
 */
const INSPECTORS = new Set([
  ...["grep", "egrep", "fgrep", "rg", "ag", "test", "[", "[[", "ls", "stat", "wc", "head", "tail", "cat"],
  ...["file", "find", "jq", "yq"],
])

/** Words before the program that leave the program in charge: `X=1`, `env`, `!`, `sudo`. */
const PREFIX = /^(?:!|[A-Za-z_][A-Za-z0-9_]*=\S*|env|nice|time|command|exec|sudo)$/

/**
 * The program of each simple command in `command` (split at `;`, `&`, `|`, newlines, parentheses and
 * backquotes; quotes are not followed, so a separator inside one only splits more, which counts more files
 * as the check's), with where its text starts. One pass over the command.
 */
function programs(command: string): Array<{ start: number; program: string }> {
  const found: Array<{ start: number; program: string }> = []
  for (const match of command.matchAll(/[^;&|\n()`]+/g)) {
    const words = match[0].trim().split(/\s+/)
    let first = 0
    while (first < words.length - 1) {
      if (PREFIX.test(words[first]!)) first++
      // `timeout -s KILL 30 cmd`: its options, then its duration.
      else if (words[first] === "timeout") {
        first++
        while (words[first]?.startsWith("-")) first += /^-[sk]$/.test(words[first]!) ? 2 : 1
        first++
      } else break
    }
    const program = (words[first] ?? "").replace(/^['"]|['"]$/g, "")
    found.push({ start: match.index, program: program.slice(program.lastIndexOf("/") + 1) })
  }
  return found
}

/**
 * True when `command` names `path` (a whole path or its tail after a `/`: `./a.test.ts`, `src/a.test.ts`)
 * anywhere but as an operand of a program that only inspects files (INSPECTORS). Linear in the command's
 * length times its mentions of `path`; the command is bounded (verify's limit).
 */
export function namesPath(command: string, path: string): boolean {
  const commands = programs(command)
  for (let at = command.indexOf(path); at >= 0; at = command.indexOf(path, at + 1)) {
    const before = command[at - 1]
    const after = command[at + path.length]
    if (!((before === undefined || /[\s/'"=]/.test(before)) && (after === undefined || /[\s'";:)]/.test(after))))
      continue
    const owner = commands.findLast((each) => each.start <= at)
    if (!owner || !INSPECTORS.has(owner.program)) return true
  }
  return false
}
