// Files that act on their own, by rule rather than by name: a list of names (autorun.json) loses to
// the next tool, so a changed file is also named when it is hidden (a `.<name>` segment at any depth:
// where tools keep their rc files, loaders and environments), when it lies at the workspace's root and
// is not source by its type (where task runners, toolchain pins and build settings live: `Frobfile`,
// `justfile`, `gradle.properties`), when it is new and executable, or when its mode changed. The named
// list still comes first and says which tool reads the file (`known:<tool>`). Pure.
import { autorunHitIn } from "./autorun"

export const AUTORUN_RULES = ["hidden", "root-non-source", "executable", "mode-change"] as const
/** The rule a changed file matched: one of AUTORUN_RULES, or `known:<tool>` for a named entry. */
export type AutorunRule = (typeof AUTORUN_RULES)[number] | `known:${string}`

/**
 * "Source by its type": a name whose extension is a programming language's source, or prose (a
 * document a person reads). Everything else at the root — no extension, data and config formats
 * (json, yaml, toml, ini, properties, lock files), build scripts named by tool — is named by the
 * root-level rule: that is where tools look for what they run.
 */
export const SOURCE_EXTENSIONS: ReadonlySet<string> = new Set([
  // prose
  "md",
  "mdx",
  "markdown",
  "txt",
  "rst",
  "adoc",
  // languages
  "ts",
  "tsx",
  "mts",
  "cts",
  "js",
  "jsx",
  "mjs",
  "cjs",
  "py",
  "pyi",
  "rb",
  "go",
  "rs",
  "java",
  "kt",
  "kts",
  "scala",
  "groovy",
  "c",
  "h",
  "cc",
  "cpp",
  "cxx",
  "hpp",
  "hh",
  "m",
  "mm",
  "cs",
  "fs",
  "swift",
  "php",
  "pl",
  "pm",
  "sh",
  "bash",
  "zsh",
  "fish",
  "ps1",
  "lua",
  "ex",
  "exs",
  "erl",
  "hrl",
  "hs",
  "ml",
  "mli",
  "clj",
  "cljs",
  "dart",
  "jl",
  "r",
  "nim",
  "zig",
  "v",
  "sv",
  "vhd",
  "sql",
  "css",
  "scss",
  "sass",
  "less",
  "html",
  "htm",
  "vue",
  "svelte",
  "astro",
  "proto",
  "graphql",
])

/** True when `name` (one path segment) is source by its type: not hidden, with an extension in the list. */
export function isSourceByType(name: string): boolean {
  const dot = name.lastIndexOf(".")
  if (dot <= 0) return false
  return SOURCE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase())
}

/** True when a segment of the workspace-relative path is hidden (`.name`). */
export const isHiddenPath = (relative: string) =>
  relative.split("/").some((part) => part.startsWith(".") && part !== "." && part !== "..")

/**
 * True when the path lies at a project's root: one segment, in a workspace that is the root of a
 * repository holding it, or outside any (`prefix`: where the workspace lies in each enclosing
 * repository). A worker in `repo/src` writing `src/notes.yml` writes no root file; tools look for theirs
 * at the repository's root.
 */
export const isRootLevel = (relative: string, prefix: string | readonly string[]) =>
  !relative.includes("/") && (typeof prefix === "string" ? [prefix] : prefix).some((each) => each === "")

/**
 * The permission bits a metadata fingerprint (`meta:<type>:<octal mode>:…`) records, or undefined; a link's
 * are always 777 and mean nothing (what it reaches is judged as itself), so a link has none.
 */
export function modeOf(fingerprint: string | undefined): number | undefined {
  if (!fingerprint?.startsWith("meta:") || fingerprint.startsWith("meta:link:")) return undefined
  const mode = Number.parseInt(fingerprint.split(":")[2] ?? "", 8)
  return Number.isNaN(mode) ? undefined : mode
}

const executable = (mode: number | undefined) => mode !== undefined && (mode & 0o111) !== 0

/** Whether a path is one the rules (not the named list) look at: hidden, at the root and not source. */
export function ruleByPath(
  relative: string,
  prefix: string | readonly string[],
): "hidden" | "root-non-source" | undefined {
  if (isHiddenPath(relative)) return "hidden"
  if (isRootLevel(relative, prefix) && !isSourceByType(relative)) return "root-non-source"
  return undefined
}

/**
 * The rule a changed path matched, from what it was (`before`) and is (`after`) as the scan
 * fingerprinted it (undefined: absent). The named list first, then a mode change, a new executable,
 * the path rules, and last an executable whose content changed.
 */
export function ruleOf(
  relative: string,
  prefix: string | readonly string[],
  before: string | undefined,
  after: string | undefined,
): AutorunRule {
  const hit = autorunHitIn(prefix, relative)
  if (hit) return `known:${hit.tool}`
  const was = modeOf(before)
  const now = modeOf(after)
  if (was !== undefined && now !== undefined && was !== now) return "mode-change"
  if (executable(now) && !executable(was)) return "executable"
  return ruleByPath(relative, prefix) ?? "executable"
}
